import type { EventDecisionName, EventSource, InboxStatus } from '../../db/schema.ts';
import { type VerificationProof, verificationProofSchema } from '../../gateways/shared/proof.ts';
import type { StoredEvent } from '../../gateways/shared/webhook-driver.ts';
import { dateOf, dateOrNull, epochMs } from './statement.ts';

/**
 * The inbox row's columns, written once: every reader selects one of these lists and maps its rows
 * with the function beside it. ids come back as float8 (bigserial stays below 2^53), times as epoch
 * milliseconds.
 */

/**
 * What processing reads: the event a handler sees, its status and when it arrived. No raw body.
 * `payload` is the expression the payload is read as (a reader may leave it out where a fact stands in).
 */
export const storedEventColumns = (payload = 'payload') => `id::float8 as id, provider, event_id, event_type, resource_id,
  ${epochMs('occurred_at')} as occurred_at_ms, ${payload} as payload, payload_lossy, status, ${epochMs('received_at')} as received_at_ms, account`;
export const STORED_EVENT_COLUMNS = storedEventColumns();

/** Which event a row is: what every reader of the inbox selects. */
interface EventIdentityRow {
  id: number;
  provider: string;
  event_id: string;
  event_type: string;
  resource_id: string | null;
}

const identityOf = (row: EventIdentityRow) => ({
  id: row.id,
  provider: row.provider,
  eventId: row.event_id,
  eventType: row.event_type,
  resourceId: row.resource_id,
});

export interface StoredEventRow extends EventIdentityRow {
  occurred_at_ms: number;
  payload: unknown;
  payload_lossy: boolean;
  status: InboxStatus;
  received_at_ms: number;
  account: string | null;
}

export interface InboxEventRow extends StoredEvent {
  id: number;
  status: InboxStatus;
  receivedAt: Date;
}

export function toInboxEvent(row: StoredEventRow): InboxEventRow {
  return {
    ...identityOf(row),
    occurredAt: dateOf(row.occurred_at_ms),
    payload: row.payload,
    payloadLossy: row.payload_lossy,
    status: row.status,
    receivedAt: dateOf(row.received_at_ms),
    account: row.account,
  };
}

/**
 * Everything an operator looks at for one event (`inboxctl show`, the dashboard's event page). The
 * payload only as PostgreSQL's text: parsed here, a payload nested deeper than JavaScript's
 * recursion would fail the read of the very event someone wants to look at.
 */
export const EVENT_DETAIL_COLUMNS = `${storedEventColumns('null')}, attempts, last_error, ${epochMs('processed_at')} as processed_at_ms,
  payload::text as payload_json, raw_body, fact, verification::text as verification_json,
  decision, decision_detail, source`;

interface EventDetailRow extends StoredEventRow {
  attempts: number;
  last_error: string | null;
  processed_at_ms: number | null;
  payload_json: string;
  raw_body: Buffer;
  fact: unknown;
  decision: EventDecisionName | null;
  decision_detail: unknown;
  verification_json: string | null;
  source: EventSource;
}

export interface InboxEventDetail extends Omit<InboxEventRow, 'payload'> {
  attempts: number;
  lastError: string | null;
  processedAt: Date | null;
  /** The stored jsonb as PostgreSQL renders it (exact: a JS round trip would round 64-bit ids). */
  payloadJson: string;
  /** The bytes the gateway signed. */
  rawBody: Buffer;
  /** What the event meant when processed (webhook_inbox.fact); null before, and after a replay. */
  fact: unknown;
  /** Why processing left it as it is (webhook_inbox.decision), and its particulars; null before, and after a replay. */
  decision: EventDecisionName | null;
  decisionDetail: unknown;
  /** How it was authenticated (webhook_inbox.verification); null on rows stored before proofs were kept. */
  verification: VerificationProof | null;
  /** How it reached the inbox: a gateway's request, or `inboxctl backfill` from the gateway's API. */
  source: EventSource;
}

export function toInboxEventDetail(row: EventDetailRow): InboxEventDetail {
  const { payload: _unread, ...event } = toInboxEvent(row);
  return {
    ...event,
    attempts: row.attempts,
    lastError: row.last_error,
    processedAt: dateOrNull(row.processed_at_ms),
    payloadJson: row.payload_json,
    rawBody: Buffer.from(row.raw_body),
    fact: row.fact,
    decision: row.decision,
    decisionDetail: row.decision_detail,
    verification: row.verification_json === null ? null : verificationProofSchema.parse(JSON.parse(row.verification_json)),
    source: row.source,
  };
}

/** What a job is queued with (queue/queues.ts EnqueueableEvent), plus when the row arrived. */
export const ENQUEUEABLE_COLUMNS = `id::float8 as id, provider, event_id, resource_id, ${epochMs('received_at')} as received_at_ms`;

export interface EnqueueableRow {
  id: number;
  provider: string;
  event_id: string;
  resource_id: string | null;
  received_at_ms: number;
}

export interface QueueableEvent {
  id: number;
  provider: string;
  eventId: string;
  resourceId: string | null;
  receivedAt: Date;
}

export function toQueueableEvent(row: EnqueueableRow): QueueableEvent {
  return { id: row.id, provider: row.provider, eventId: row.event_id, resourceId: row.resource_id, receivedAt: dateOf(row.received_at_ms) };
}

/** An event as a list shows it (the dashboard's event list, its failed events): no payload, no body. */
export const LISTED_EVENT_COLUMNS = `id::float8 as id, provider, event_id, event_type, resource_id, status, decision, attempts,
  ${epochMs('received_at')} as received_at_ms, ${epochMs('occurred_at')} as occurred_at_ms`;

export interface ListedEventRow extends EventIdentityRow {
  status: InboxStatus;
  decision: EventDecisionName | null;
  attempts: number;
  received_at_ms: number;
  occurred_at_ms: number;
}

export interface ListedEvent {
  id: number;
  provider: string;
  eventId: string;
  eventType: string;
  /** The gateway's charge (or payment) the event is about. */
  resourceId: string | null;
  status: InboxStatus;
  decision: EventDecisionName | null;
  attempts: number;
  receivedAt: Date;
  occurredAt: Date;
}

export function toListedEvent(row: ListedEventRow): ListedEvent {
  return {
    ...identityOf(row),
    status: row.status,
    decision: row.decision,
    attempts: row.attempts,
    receivedAt: dateOf(row.received_at_ms),
    occurredAt: dateOf(row.occurred_at_ms),
  };
}
