import { z } from 'zod';
import { MalformedPayloadError } from '../../errors.ts';
import type { PaymentFact, PaymentStatus } from '../../domain/payments/payment-fact.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, StoredEvent, WebhookRequest } from '../shared/webhook-driver.ts';
import { decimalToMinorUnits } from '../shared/amounts.ts';
import { derivedEventKey } from '../shared/derived-key.ts';
import { parseJsonBody, readIdentifier } from '../shared/json-body.ts';
import { chargeFact, upperCurrency } from '../shared/payment-facts.ts';
import { parseLenientTimestamp } from '../shared/timestamps.ts';
import { reverifyByFingerprint } from '../shared/reverify.ts';
import { tokenVerification } from '../shared/token-verification.ts';

/**
 * Zoop: no body signature is documented. A webhook registered with an `authorization` value is
 * believed to send it back as the `Authorization` header [UNVERIFIED]; when secrets are
 * configured (WEBHOOK_SECRET_ZOOP, the exact header value, e.g. `Basic dXNlcjpwYXNz`), that header
 * must carry one of them (constant time, ../shared/token-verification.ts). With no secret the endpoint is open: treat
 * the webhook as a notice and refetch the transaction (the default ordering for Zoop).
 * Dedupe key: `id` (the event's 32-hex id); without it, the derived key of (transaction id, type,
 * transaction status, created_at).
 * Envelopes (the imobanco/zoop-wrapper event fixtures show three): `{ id, type, resource: "event",
 * payload: { object: { id, resource: "transaction", status, amount: "5.00", currency, captured,
 * voided, … } }, created_at: "2020-07-06T14:01:51+0000" }` (transaction.succeeded); the transaction
 * directly under `payload` (transaction.failed); and under a top-level `object`, with no event id
 * nor created_at (transaction.pre_authorization.succeeded). Type `type`, resource the
 * transaction's `id`, occurred_at `created_at` (offset without a colon), else the transaction's
 * `updated_at` (when it last changed: the event's moment, the same on every resend), else the
 * receipt time. An empty id (the wrapper's fixtures blank them) is no id.
 * Retry schedule, timeout and success codes: not documented [UNVERIFIED]; dispatch within 1 minute.
 */

const record = z.record(z.string(), z.unknown());

const envelope = z.object({
  id: z.string().optional(),
  type: z.string().min(1),
  created_at: z.string().optional(),
  payload: record.optional(),
  object: record.optional(),
});

type ZoopObject = Record<string, unknown>;

const isRecord = (value: unknown): value is ZoopObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The resource the event is about, wherever its envelope puts it. */
function eventObject(event: ZoopObject): ZoopObject | undefined {
  const { payload, object } = event;
  if (isRecord(payload) && isRecord(payload.object)) return payload.object;
  if (isRecord(payload) && payload.resource === 'transaction') return payload;
  return isRecord(object) ? object : undefined;
}

function timestampOf(value: unknown, field: string): Date | undefined {
  if (value === undefined) return undefined;
  const at = typeof value === 'string' ? parseLenientTimestamp(value) : undefined;
  if (at === undefined) throw new MalformedPayloadError(`${field} is not a timestamp.`);
  return at;
}

function parseZoop(request: WebhookRequest, now: Date): NormalizedEvent {
  const { json, envelope: event } = parseJsonBody(request.rawBody, envelope, 'Zoop');
  const object = eventObject(event);
  const resourceId = (object && readIdentifier(object, 'id')) ?? null;
  const sentAt = timestampOf(event.created_at, 'created_at') ?? (object?.resource === 'transaction' ? timestampOf(object.updated_at, 'updated_at') : undefined);
  const eventId = event.id
    ? event.id
    : derivedEventKey({ resourceId, eventType: event.type, status: (object && readIdentifier(object, 'status')) ?? null, occurredAt: sentAt ?? null });
  return { eventId, eventType: event.type, resourceId, occurredAt: sentAt ?? now, occurredAtIsRequestTime: sentAt === undefined, payload: json };
}

// Zoop's transaction events (wrapper's Webhook.EVENTS) in canonical terms; the rest are not
// payment facts. [UNVERIFIED beyond the event names: no official mapping is published.]
const statusByEvent: Record<string, PaymentStatus> = {
  'transaction.created': 'pending',
  'transaction.pending': 'pending',
  // Funds held on the card, captured later (transaction.capture.succeeded) or voided.
  'transaction.pre_authorized': 'authorized',
  'transaction.pre_authorization.succeeded': 'authorized',
  'transaction.pre_authorization.failed': 'failed',
  'transaction.succeeded': 'paid',
  'transaction.capture.succeeded': 'paid',
  'transaction.failed': 'failed',
  'transaction.canceled': 'canceled',
  'transaction.void.succeeded': 'canceled',
  'transaction.reversed': 'refunded',
  'transaction.refunded': 'refunded',
  'transaction.disputed': 'disputed',
  'transaction.dispute.succeeded': 'disputed',
  'transaction.charged_back': 'charged_back',
};

function statusOf(eventType: string, object: Record<string, unknown>): PaymentStatus | undefined {
  const status = statusByEvent[eventType];
  // Zoop "voids" a captured card transaction to give the money back: the fixture of a cancel
  // shows status "canceled" with captured: true. For the payment that is a refund, not a
  // cancellation of something never paid.
  if (status === 'canceled' && object.captured === true) return 'refunded';
  return status;
}

export function toZoopPaymentFact(event: StoredEvent): PaymentFact | null {
  const object = isRecord(event.payload) ? eventObject(event.payload) : undefined;
  if (!object || event.resourceId === null || object.resource !== 'transaction') return null;
  const status = statusOf(event.eventType, object);
  if (!status) return null;
  const currency = upperCurrency(object.currency);
  const amount = decimalToMinorUnits(object.amount, currency);
  return chargeFact(event.resourceId, status, event.occurredAt, {
    amount,
    amountRefunded: status === 'refunded' ? amount : undefined,
    currency,
  });
}

export function createZoopDriver(settings: ProviderSettings): ProviderDriver {
  // Without a configured token nothing is checked, and the proof says so.
  const verification: Pick<ProviderDriver, 'verify' | 'reverify'> =
    settings.secrets.length > 0
      ? tokenVerification('authorization', settings.secrets)
      : { verify: (_request, now) => ({ scheme: 'none', verifiedAt: now.toISOString() }), reverify: (stored) => reverifyByFingerprint([], stored.proof) };
  return {
    name: 'zoop',
    ...verification,
    parse: parseZoop,
    toPaymentFact: toZoopPaymentFact,
  };
}

// Zoop publishes no retry schedule: 14 days, the longest documented window among the gateways
// here, and under the default 30-day retention.
export const zoopDriver: DriverDefinition = { create: createZoopDriver, requiresSecret: false, resendWindowDays: 14 };
