import { MalformedPayloadError } from '../../errors.ts';
import type { PaymentFact, PaymentStatus } from '../../domain/payments/payment-fact.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, StoredEvent, WebhookRequest } from '../shared/webhook-driver.ts';
import { integerMinorUnits } from '../shared/amounts.ts';
import { derivedEventKey } from '../shared/derived-key.ts';
import { decodeBracketForm } from '../shared/form-body.ts';
import { type HmacScheme, hmacVerification } from '../shared/hmac-verification.ts';
import { readPath } from '../shared/json-body.ts';
import { chargeFact } from '../shared/payment-facts.ts';
import { parseLenientTimestamp } from '../shared/timestamps.ts';
import { pagarmeLegacySplit } from './split.ts';

/**
 * Pagar.me legacy postbacks (API v1–v4): `X-Hub-Signature: sha1=<hex>`, HMAC-SHA1 of the raw
 * form-encoded body keyed with the account's API key (`ak_live_…`/`ak_test_…`; configure it as
 * WEBHOOK_SECRET_PAGARME_LEGACY). pagarme-php treats the prefix as the algorithm name; pagarme-js
 * compares the bare hex: both forms are accepted. No timestamp, so no replay window.
 * The body (`id=…&event=transaction_status_changed&current_status=paid&transaction[amount]=3100…`)
 * is decoded into nested objects for `payload`; the exact bytes stay in raw_body.
 * Dedupe key: postbacks carry no event id, so the derived key of (object id, event,
 * current_status, transaction[date_updated]) — not of the body, whose `fingerprint` and send
 * metadata are not part of the fact.
 * Type `event`; resource `id` (the transaction or subscription id); occurred_at
 * `<object>[date_updated]` (ISO with ms), else the receipt time (then left out of the key).
 * Pagar.me counts only HTTP 200 as delivered and retries up to 31 times.
 */

const scheme: HmacScheme = { header: 'x-hub-signature', algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=', prefixRequired: false };

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function parsePostback(request: WebhookRequest, now: Date): NormalizedEvent {
  const body = decodeBracketForm(request.rawBody.toString('utf8'));
  const eventType = text(body.event) ?? text(request.header('x-pagarme-event'));
  const resourceId = text(body.id);
  if (!eventType || !resourceId) throw new MalformedPayloadError('The postback has no event or no id; is this a Pagar.me form-encoded postback?');
  const objectName = text(body.object) ?? 'transaction';
  const updatedAt = text(readPath(body, `${objectName}.date_updated`));
  const sentAt = updatedAt === undefined ? undefined : parseLenientTimestamp(updatedAt);
  if (updatedAt !== undefined && sentAt === undefined) throw new MalformedPayloadError("The postback's date_updated is not a timestamp.");
  const eventId = derivedEventKey({ resourceId, eventType, status: text(body.current_status) ?? null, occurredAt: sentAt ?? null });
  return { eventId, eventType, resourceId, occurredAt: sentAt ?? now, occurredAtIsRequestTime: sentAt === undefined, payload: body };
}

// v4 transaction statuses in canonical terms. pending_refund is a refund not done yet: no fact.
const statusByTransactionStatus: Record<string, PaymentStatus> = {
  processing: 'pending',
  // Authorized, not captured: with capture=false it stays so until captured (→ paid) or voided.
  authorized: 'authorized',
  waiting_payment: 'pending',
  analyzing: 'pending',
  pending_review: 'pending',
  paid: 'paid',
  refused: 'failed',
  refunded: 'refunded',
  chargedback: 'charged_back',
};

export function toPagarmeLegacyPaymentFact(event: StoredEvent): PaymentFact | null {
  const body = event.payload as Record<string, unknown>;
  if (body.object !== 'transaction' || event.resourceId === null) return null;
  let status = statusByTransactionStatus[String(body.current_status)];
  if (!status) return null;
  const amount = integerMinorUnits(readPath(body, 'transaction.amount'));
  const refunded = integerMinorUnits(readPath(body, 'transaction.refunded_amount'));
  // Refunding an authorized transaction voids the hold: nothing had been taken.
  if (status === 'refunded' && body.old_status === 'authorized') {
    return chargeFact(event.resourceId, 'canceled', event.occurredAt, { amount, amountRefunded: 0, currency: 'BRL' });
  }
  if (status === 'refunded' && amount !== undefined && refunded !== undefined && refunded < amount) status = 'partially_refunded';
  // API v4 charges only in reais; amounts are integer centavos.
  const fact = chargeFact(event.resourceId, status, event.occurredAt, { amount, amountRefunded: refunded, currency: 'BRL' });
  const split = pagarmeLegacySplit(body);
  return split ? { ...fact, split } : fact;
}

export function createPagarmeLegacyDriver(settings: ProviderSettings): ProviderDriver {
  return {
    name: 'pagarme-legacy',
    ...hmacVerification(scheme, settings),
    parse: parsePostback,
    toPaymentFact: toPagarmeLegacyPaymentFact,
  };
}

// "Up to 31 attempts" with no published schedule: 14 days, as for other unknown schedules here.
export const pagarmeLegacyDriver: DriverDefinition = { create: createPagarmeLegacyDriver, requiresSecret: true, resendWindowDays: 14 };
