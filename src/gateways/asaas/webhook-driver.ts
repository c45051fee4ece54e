import { z } from 'zod';
import { MalformedPayloadError } from '../../errors.ts';
import type { PaymentFact, PaymentStatus } from '../../domain/payments/payment-fact.ts';
import type {
  DriverDefinition,
  NormalizedEvent,
  ProviderAccount,
  ProviderDriver,
  ProviderSettings,
  StoredEvent,
  WebhookRequest,
} from '../shared/webhook-driver.ts';
import { decimalToMinorUnits } from '../shared/amounts.ts';
import { derivedEventKey } from '../shared/derived-key.ts';
import { parseJsonBody, readIdentifier } from '../shared/json-body.ts';
import { chargeFact } from '../shared/payment-facts.ts';
import { matchingTokenIndex } from '../shared/signature.ts';
import { parseLenientTimestamp } from '../shared/timestamps.ts';
import { tokenVerification } from '../shared/token-verification.ts';

/**
 * Asaas: `asaas-access-token: <authToken>`, the static token (32–255 characters) set on the
 * webhook, compared in constant time by the token driver. There is no body signature (see
 * ../shared/token-verification.ts for what that implies). Asaas counts only HTTP 200 as delivered: the route answers
 * exactly 200, never 201/204.
 * Dedupe key: `id` (`evt_<hex>&<number>` — it contains `&`, so never put it in a URL unencoded),
 * sent on every webhook since 2024-03-25 and the same on resends. Older payloads without it get
 * the derived key of (entity id, event, entity status, dateCreated).
 * Type `event`. Resource: the entity under the key named after the event's family (`payment.id`
 * for PAYMENT_*, `transfer.id` for TRANSFER_*, `mobilePhoneRecharge.id` for MOBILE_PHONE_RECHARGE_*).
 * occurred_at: `dateCreated`, "YYYY-MM-DD HH:mm:ss" with no zone. Asaas is a Brazilian platform
 * writing America/Sao_Paulo local time, which has been a fixed UTC-03:00 since Brazil abolished
 * daylight saving in 2019, so the time is read as -03:00. [UNVERIFIED: Asaas's docs never state
 * the zone.] Payloads without `dateCreated` get the receipt time.
 * Ordering: strictly ordered only when the webhook's sendType is SEQUENTIALLY; assume not.
 */

const SAO_PAULO_OFFSET = '-03:00';

const envelope = z.object({
  id: z.string().min(1).optional(),
  event: z.string().min(1),
  dateCreated: z.string().optional(),
});

function camelCase(words: string[]): string {
  return words.map((word, i) => (i === 0 ? word.toLowerCase() : word.charAt(0) + word.slice(1).toLowerCase())).join('');
}

/** The key of the event's entity: the longest prefix of the event name that names an object in the body. */
export function entityKeyOf(event: string, body: Record<string, unknown>): string | undefined {
  const words = event.split('_');
  for (let length = words.length - 1; length >= 1; length--) {
    const key = camelCase(words.slice(0, length));
    const value = body[key];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return key;
  }
  return undefined;
}

function parseAsaas(request: WebhookRequest, now: Date): NormalizedEvent {
  const { json, envelope: event } = parseJsonBody(request.rawBody, envelope, 'Asaas');
  const body = json as Record<string, unknown>;
  const entityKey = entityKeyOf(event.event, body);
  const resourceId = entityKey ? (readIdentifier(body, `${entityKey}.id`) ?? null) : null;
  const sentAt = event.dateCreated === undefined ? undefined : parseLenientTimestamp(event.dateCreated, SAO_PAULO_OFFSET);
  if (event.dateCreated !== undefined && sentAt === undefined) {
    throw new MalformedPayloadError('dateCreated is not a "YYYY-MM-DD HH:mm:ss" time.');
  }
  const eventId =
    event.id ??
    derivedEventKey({
      resourceId,
      eventType: event.event,
      status: entityKey ? (readIdentifier(body, `${entityKey}.status`) ?? null) : null,
      occurredAt: sentAt ?? null,
    });
  return { eventId, eventType: event.event, resourceId, occurredAt: sentAt ?? now, occurredAtIsRequestTime: sentAt === undefined, payload: json };
}

// Asaas's payment events (docs.asaas.com "Payment events"), in canonical terms. Not mapped (null):
// PAYMENT_UPDATED (due date or value changed), PAYMENT_ANTICIPATED, PAYMENT_REFUND_IN_PROGRESS
// (the refund is not done yet), PAYMENT_DUNNING_*, PAYMENT_*_VIEWED, PAYMENT_SPLIT_*.
const statusByEvent: Record<string, PaymentStatus> = {
  PAYMENT_CREATED: 'pending',
  PAYMENT_AWAITING_RISK_ANALYSIS: 'pending',
  PAYMENT_APPROVED_BY_RISK_ANALYSIS: 'pending',
  // A card charge created with authorizeOnly: the funds are held, to be captured
  // (captureAuthorizedPayment) or released; not money received.
  PAYMENT_AUTHORIZED: 'authorized',
  PAYMENT_RESTORED: 'pending',
  PAYMENT_RECEIVED_IN_CASH_UNDONE: 'pending',
  // Overdue is not an end: a boleto or Pix charge can still be paid after its due date, so it
  // stays pending (and, like every late pending, never demotes a paid payment).
  PAYMENT_OVERDUE: 'pending',
  // CONFIRMED = paid, balance not yet released; RECEIVED = paid and released. Both are paid.
  PAYMENT_CONFIRMED: 'paid',
  PAYMENT_RECEIVED: 'paid',
  PAYMENT_REPROVED_BY_RISK_ANALYSIS: 'failed',
  // The capture of an authorized charge was refused.
  PAYMENT_CREDIT_CARD_CAPTURE_REFUSED: 'failed',
  // A deleted charge can no longer be paid (PAYMENT_RESTORED brings it back, as pending).
  PAYMENT_DELETED: 'canceled',
  PAYMENT_REFUNDED: 'refunded',
  PAYMENT_PARTIALLY_REFUNDED: 'partially_refunded',
  PAYMENT_CHARGEBACK_REQUESTED: 'disputed',
  PAYMENT_CHARGEBACK_DISPUTE: 'disputed',
  // "Dispute won, waiting for the transfer from the acquirer": the money stays; the fold returns
  // the payment to what it was before the dispute (docs/disputes.md).
  // Asaas documents no webhook for a lost chargeback; refetch is how a charged_back status is seen.
  PAYMENT_AWAITING_CHARGEBACK_REVERSAL: 'paid',
};

// Asaas charges only in reais: a payment has no currency field, and its decimals are BRL's.
const ASAAS_CURRENCY = 'BRL';

/** The sum of the refunds listed on the payment, when Asaas lists them. */
function refundedAmount(payment: Record<string, unknown>): number | undefined {
  if (!Array.isArray(payment.refunds)) return undefined;
  let total = 0;
  for (const refund of payment.refunds as Array<Record<string, unknown>>) {
    if (refund?.status === 'CANCELLED') continue;
    const value = decimalToMinorUnits(refund?.value, ASAAS_CURRENCY);
    if (value === undefined) return undefined;
    total += value;
  }
  return total;
}

/**
 * A refund of a charge that was never captured (an authorization released early through the
 * refund API, or lapsed) gave nothing back: it was canceled. Asaas always sends both dates, null
 * until the charge is paid. [UNVERIFIED: which event a lapsed hold sends; the docs only say it is
 * "automatically reversed".]
 */
export function neverCaptured(payment: Record<string, unknown>): boolean {
  return 'confirmedDate' in payment && 'paymentDate' in payment && payment.confirmedDate === null && payment.paymentDate === null;
}

export function toAsaasPaymentFact(event: StoredEvent): PaymentFact | null {
  const payment = (event.payload as { payment?: Record<string, unknown> }).payment;
  let status = statusByEvent[event.eventType];
  if (!status || !payment || event.resourceId === null) return null;
  if (status === 'refunded' && neverCaptured(payment)) status = 'canceled';
  const amount = decimalToMinorUnits(payment.value, ASAAS_CURRENCY);
  return chargeFact(event.resourceId, status, event.occurredAt, {
    amount,
    amountRefunded: status === 'refunded' ? amount : status === 'partially_refunded' ? refundedAmount(payment) : undefined,
    currency: ASAAS_CURRENCY,
  });
}

const TOKEN_HEADER = 'asaas-access-token';

/**
 * Subaccounts ("subcontas"): each configures its own webhooks, each with its own authToken
 * (docs.asaas.com "Creating subaccounts": webhooks are set per subaccount; "Create new Webhook via
 * API": for root and subaccounts alike). Several may point at one URL; what tells them apart is the
 * token, so a delivery is attributed to the account whose token it carries: every configured token
 * (the provider's own secrets, then each account's) is compared in constant time, no early exit
 * (matchingTokenIndex), and configuration refuses one token for two accounts. The provider's own
 * secrets are the root account's webhooks: their deliveries have no account (null).
 * UNVERIFIED: whether an Asaas payload itself names the subaccount it happened in; nothing here
 * relies on it.
 */
function accountOwners(secrets: readonly string[], accounts: readonly ProviderAccount[]) {
  const tokens = [...secrets, ...accounts.map((account) => account.token)];
  const owners: (string | null)[] = [...secrets.map(() => null), ...accounts.map((account) => account.id)];
  /** The account whose token the delivery carries; null for the provider's own, or with no token (a backfilled event). */
  const accountOf = (request: WebhookRequest): string | null => {
    const received = request.header(TOKEN_HEADER)?.trim();
    if (!received || accounts.length === 0) return null;
    return owners[matchingTokenIndex(received, tokens)] ?? null;
  };
  return { tokens, accountOf };
}

export function createAsaasDriver(settings: ProviderSettings): ProviderDriver {
  const { tokens, accountOf } = accountOwners(settings.secrets, settings.accounts ?? []);
  return {
    name: 'asaas',
    ...tokenVerification(TOKEN_HEADER, tokens),
    parse: (request, now) => ({ ...parseAsaas(request, now), account: accountOf(request) }),
    toPaymentFact: toAsaasPaymentFact,
  };
}

// 15 attempts over about 13 hours, then the queue pauses; paused events are kept 14 days and
// delivered when the queue is reactivated: a resend can come 14 days + 13 hours later.
export const asaasDriver: DriverDefinition = { create: createAsaasDriver, requiresSecret: true, resendWindowDays: 15, attributesAccountsByToken: true };
