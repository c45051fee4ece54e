import { and, eq, inArray, isNotNull, notInArray, or, sql } from 'drizzle-orm';
import type { Executor, Transaction } from '../db/client.ts';
import { type InboxStatus, type SettledStatus, webhookInbox } from '../db/schema.ts';
import type { StoredEvent } from '../providers/types.ts';

export interface InboxEventRow extends StoredEvent {
  id: number;
  status: InboxStatus;
  receivedAt: Date;
}

/**
 * A processed row of the same resource, with what it meant when processed (fact; null: not
 * recorded). Its payload is read only when no fact was recorded (null otherwise).
 */
export interface KnownResourceEventRow extends InboxEventRow {
  fact: unknown;
}

const storedEventColumns = {
  id: webhookInbox.id,
  provider: webhookInbox.provider,
  eventId: webhookInbox.eventId,
  eventType: webhookInbox.eventType,
  resourceId: webhookInbox.resourceId,
  occurredAt: webhookInbox.occurredAt,
  payload: webhookInbox.payload,
  payloadLossy: webhookInbox.payloadLossy,
  receivedAt: webhookInbox.receivedAt,
};

/** A batch's rows, unlocked, outside its transaction: routing and `prepare` need the events first. */
export async function readInboxEvents(db: Executor, ids: readonly number[]): Promise<Map<number, InboxEventRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ ...storedEventColumns, status: webhookInbox.status })
    .from(webhookInbox)
    .where(inArray(webhookInbox.id, [...ids]));
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Locks a batch's rows for the rest of its transaction, in id order (overlapping batches wait
 * instead of deadlocking), and returns their statuses now. A second job of the same event
 * (sweeper, replay, an expired attempt) waits here, then finds it no longer pending.
 */
export async function lockInboxEvents(tx: Transaction, ids: readonly number[]): Promise<Map<number, InboxStatus>> {
  const rows = await tx
    .select({ id: webhookInbox.id, status: webhookInbox.status })
    .from(webhookInbox)
    .where(inArray(webhookInbox.id, [...ids]))
    .orderBy(webhookInbox.id)
    .for('update');
  return new Map(rows.map((row) => [row.id, row.status]));
}

export interface EventOutcome {
  id: number;
  outcome: SettledStatus;
  /** What the event meant when processed (see webhook_inbox.fact); undefined leaves the column as it is. */
  fact?: unknown;
}

/** Inside the batch's transaction: each row processed/ignored, with its attempt counted. One statement. */
export async function markEventOutcomes(tx: Transaction, outcomes: readonly EventOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const values = JSON.stringify(outcomes.map(({ id, outcome, fact }) => ({ id, status: outcome, fact: fact ?? null, has_fact: fact !== undefined })));
  await tx.execute(sql`
    update ${webhookInbox} as w set
      status = v.status, attempts = w.attempts + 1, processed_at = now(), last_error = null,
      fact = case when v.has_fact then v.fact else w.fact end
    from jsonb_to_recordset(${values}::jsonb) as v(id bigint, status varchar, fact jsonb, has_fact boolean)
    where w.id = v.id`);
}

/**
 * The event waits for something outside it (the gateway API's circuit breaker): the row stays
 * pending with the reason in last_error, and the attempt is not counted, since nothing failed.
 */
export async function noteEventDeferred(db: Executor, id: number, reason: string): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ lastError: reason })
    .where(and(eq(webhookInbox.id, id), eq(webhookInbox.status, 'pending')));
}

/** After a rolled-back attempt, outside that transaction: the attempt still counts, with its error. */
export async function recordFailedAttempt(db: Executor, id: number, error: string): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ attempts: sql`${webhookInbox.attempts} + 1`, lastError: error })
    .where(and(eq(webhookInbox.id, id), eq(webhookInbox.status, 'pending')));
}

/**
 * Retries are exhausted: the row needs a human. The last recorded error is kept; pg-boss's own
 * (expiry, shutdown) fills in when the handler never got to record one. Idempotent.
 */
export async function markEventFailed(db: Executor, id: number, fallbackError: string): Promise<boolean> {
  const rows = await db
    .update(webhookInbox)
    .set({ status: 'failed', lastError: sql`coalesce(${webhookInbox.lastError}, ${fallbackError})` })
    .where(and(eq(webhookInbox.id, id), eq(webhookInbox.status, 'pending')))
    .returning({ id: webhookInbox.id });
  return rows.length > 0;
}

export interface ResourceKey {
  provider: string;
  resourceId: string;
}

/**
 * The resources' events whose facts are known, except the batch's own: processed or ignored once
 * (processed_at stays set when a replay puts a row back to pending, so replaying never hides a
 * fact the payment already reflects). Served by the (provider, resource_id) index.
 */
export async function selectKnownResourceEvents(tx: Transaction, resources: readonly ResourceKey[], exceptIds: readonly number[]): Promise<KnownResourceEventRow[]> {
  if (resources.length === 0) return [];
  const keys = JSON.stringify(resources.map((r) => ({ provider: r.provider, resource_id: r.resourceId })));
  return tx
    .select({
      ...storedEventColumns,
      // The payload only where no fact was recorded: the fact is what later folds read, and a
      // charge's history is read once per event of it, so payloads would dominate the transfer.
      payload: sql<unknown>`case when ${webhookInbox.fact} is null then ${webhookInbox.payload} end`.mapWith(webhookInbox.payload),
      status: webhookInbox.status,
      fact: webhookInbox.fact,
    })
    .from(webhookInbox)
    .where(
      and(
        sql`(${webhookInbox.provider}, ${webhookInbox.resourceId}) in (
          select k.provider, k.resource_id from jsonb_to_recordset(${keys}::jsonb) as k(provider text, resource_id text))`,
        exceptIds.length > 0 ? notInArray(webhookInbox.id, [...exceptIds]) : undefined,
        or(inArray(webhookInbox.status, ['processed', 'ignored']), isNotNull(webhookInbox.processedAt)),
      ),
    );
}
