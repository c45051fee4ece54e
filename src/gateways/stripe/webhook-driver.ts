import { z } from 'zod';
import { SignatureError } from '../../errors.ts';
import type { InquiryChange, PaymentFact, PaymentStatus } from '../../domain/payments/payment-fact.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, StoredEvent, WebhookRequest } from '../shared/webhook-driver.ts';
import { parseJsonBody } from '../shared/json-body.ts';
import { chargeFact, upperCurrency } from '../shared/payment-facts.ts';
import { type SecretSignatureProof, secretMatch } from '../shared/proof.ts';
import { reverifySignature } from '../shared/reverify.ts';
import { secretFingerprints } from '../shared/secret-fingerprint.ts';
import { assertTimestampWithinTolerance, hmac, matchingDigestIndex, requireHeader } from '../shared/signature.ts';
import { signedMaterial } from '../shared/signed-material.ts';
import { stripeAmountInMinorUnits } from './amounts.ts';

/**
 * Stripe: `Stripe-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 over `${t}.${rawBody}`
 * keyed with the whole `whsec_…` string (not base64-decoded, unlike Standard Webhooks). Any v1 may
 * match (Stripe signs with old and new secrets while a secret is rolled); v0 is ignored.
 * Dedupe key: the event `id` (evt_…), stable across resends.
 * Resource: the payment the event is about (its key: see below).
 */

const envelope = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
  // A Connect endpoint's events name the connected account they happened on (`acct_…`); an
  // account's own events carry none. Anything but a non-empty string is read as none, never refused.
  account: z.string().min(1).optional().catch(undefined),
});

interface StripeSignatureHeader {
  timestamp: number;
  signatures: Buffer[];
}

/**
 * The header's parts, each checked on its own so the refusal names the one that is wrong: a
 * missing or non-numeric t=, no v1= at all (a test-mode v0= alone), or a v1= that is not 64 hex
 * digits. Stripe's own SDK skips such a v1 and then matches none; here it is said as it is.
 */
export function parseStripeSignatureHeader(header: string): StripeSignatureHeader {
  const timestamps: string[] = [];
  const v1: string[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator < 0) continue;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't') timestamps.push(value);
    if (key === 'v1') v1.push(value);
  }
  const malformed = (what: string) =>
    new SignatureError('signature_malformed', `The Stripe-Signature header ${what}; Stripe sends t=<unix seconds>,v1=<64 hex digits>.`);
  if (timestamps.length === 0) throw malformed('has no t= timestamp');
  if (!/^\d{1,16}$/.test(timestamps[0]!)) throw malformed('has a t= that is not a unix timestamp');
  if (v1.length === 0) throw malformed('has no v1= signature (a v0= alone is not checked)');
  const signatures = v1.filter((value) => /^[0-9a-f]{64}$/i.test(value)).map((value) => Buffer.from(value, 'hex'));
  if (signatures.length === 0) throw malformed(`has ${v1.length === 1 ? 'a v1= that is' : 'v1= values that are'} not an HMAC-SHA256 in hex (64 hex digits)`);
  return { timestamp: Number(timestamps[0]), signatures };
}

/**
 * What a Stripe event says about a payment, for the three families an integration may subscribe
 * to: `charge.*` (the Charges of a payment), `payment_intent.*` and `checkout.session.*`.
 *
 * The payment key. One money movement shows up as a Checkout Session (cs_), a PaymentIntent (pi_)
 * and one or more Charges (ch_: a declined attempt, then the one that succeeded). The PaymentIntent
 * is the one object every family names (a charge's and a dispute's `payment_intent`, a session's
 * `payment_intent`), so it is the key; a charge without one (created with the Charges API) is
 * keyed by its own id, as before PaymentIntents were read. The key is also the event's
 * resource_id, so every event of one payment is serialised in one lane whatever its family.
 *
 * A PaymentIntent event is a fact only once the PaymentIntent has a charge (`latest_charge`): one
 * that never reached a charge (canceled before any attempt, a 3-D Secure failure) moved no money
 * and has no charge.* event either, so an integration subscribed to payment_intent.* only, to
 * charge.* only or to both ends with the same payments. Checkout events name no charge: they
 * are facts whenever the session (payment mode) has a PaymentIntent.
 */

interface StripePaymentKeys {
  /** The payment's key: the PaymentIntent id, else the charge id, else the object's own id. */
  key: string;
  /** The charge the event names, when it names one and it is not the key. */
  legacyChargeId: string | undefined;
}

type StripeObject = Record<string, unknown>;

/** An id as Stripe sends it: a string, or an expanded object carrying one. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value.length > 0 ? value : undefined;
  if (typeof value === 'object' && value !== null) return idOf((value as StripeObject).id);
  return undefined;
}

/** The PaymentIntent and charge an event's object names, by the event's family. */
function namedIds(type: string, object: StripeObject): { paymentIntent?: string; charge?: string } {
  if (type.startsWith('charge.dispute.') || type.startsWith('charge.refund.') || type.startsWith('refund.')) {
    return { paymentIntent: idOf(object.payment_intent), charge: idOf(object.charge) };
  }
  if (type.startsWith('charge.')) return { paymentIntent: idOf(object.payment_intent), charge: idOf(object.id) };
  if (type.startsWith('payment_intent.')) return { paymentIntent: idOf(object.id), charge: idOf(object.latest_charge) };
  if (type.startsWith('checkout.session.')) return { paymentIntent: idOf(object.payment_intent) };
  return {};
}

function stripePaymentKeys(type: string, object: StripeObject): StripePaymentKeys | null {
  const { paymentIntent, charge } = namedIds(type, object);
  const key = paymentIntent ?? charge ?? idOf(object.id);
  if (key === undefined) return null;
  return { key, legacyChargeId: charge !== undefined && charge !== key ? charge : undefined };
}

interface Meaning {
  status: PaymentStatus;
  amount?: number;
  amountRefunded?: number;
  inquiry?: InquiryChange;
}

function minorUnits(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

// An authorization that is voided (Stripe marks the uncaptured charge refunded) or lapses returns
// nothing: no money was taken, so nothing counts as refunded.
function chargeMeaning(type: string, charge: StripeObject): Meaning | null {
  const amount = minorUnits(charge.amount);
  const uncaptured = charge.captured === false;
  const money = (status: PaymentStatus, amountRefunded = minorUnits(charge.amount_refunded)): Meaning => ({ status, amount, amountRefunded });
  switch (type) {
    case 'charge.pending':
      return money('pending');
    case 'charge.succeeded':
      return money(uncaptured ? 'authorized' : 'paid');
    case 'charge.captured':
      return money('paid');
    case 'charge.failed':
      return money('failed');
    case 'charge.expired':
      return money('canceled', 0);
    case 'charge.refunded':
      if (uncaptured && charge.refunded === true) return money('canceled', 0);
      return money(Number(charge.amount_refunded) < Number(charge.amount) ? 'partially_refunded' : 'refunded');
    default:
      return null;
  }
}

/**
 * A dispute's event by the dispute's `status` (stripe-node Dispute.Status; docs/disputes.md).
 * `warning_*` are inquiries: no funds withdrawn, the charge can still be refunded, so only the
 * payment's inquiry flag moves; `prevented` (stopped before it became a chargeback, Visa RDR) moved
 * no money either. `needs_response`/`under_review` are disputes: funds withdrawn. `won` returns
 * the payment to what it was before the dispute, `lost` charges it back. An inquiry escalated in
 * place shows as the same dispute gone `needs_response` (charge.dispute.updated and
 * charge.dispute.funds_withdrawn), so those say an open dispute or inquiry too; how a dispute ends
 * is read from charge.dispute.closed (and .created) only, so a second notice of the same outcome
 * (funds_reinstated beside closed) is not a second decision.
 */
function disputeMeaning(type: string, dispute: StripeObject): Meaning | null {
  const ends = type === 'charge.dispute.created' || type === 'charge.dispute.closed';
  const opens = ends || type === 'charge.dispute.updated' || type === 'charge.dispute.funds_withdrawn';
  switch (dispute.status) {
    case 'warning_needs_response':
    case 'warning_under_review':
      return opens ? { status: 'paid', inquiry: 'opened' } : null;
    case 'needs_response':
    case 'under_review':
      return opens ? { status: 'disputed' } : null;
    case 'warning_closed':
    case 'prevented':
      return ends ? { status: 'paid', inquiry: 'closed' } : null;
    case 'won':
      return ends ? { status: 'paid' } : null;
    case 'lost':
      return ends ? { status: 'charged_back' } : null;
    default:
      return null;
  }
}

function paymentIntentMeaning(type: string, intent: StripeObject): Meaning | null {
  if (idOf(intent.latest_charge) === undefined) return null;
  const at = (status: PaymentStatus): Meaning => ({ status, amount: minorUnits(intent.amount) });
  switch (type) {
    case 'payment_intent.processing':
      return at('pending');
    case 'payment_intent.amount_capturable_updated':
      return intent.status === 'requires_capture' ? at('authorized') : null;
    case 'payment_intent.succeeded':
      return at('paid');
    case 'payment_intent.payment_failed':
      return at('failed');
    case 'payment_intent.canceled':
      return at('canceled');
    default:
      return null;
  }
}

// `completed` is not "paid": payment_status says whether the money is there (`unpaid`: a delayed
// method such as a boleto or a bank debit is still to settle, async_payment_* follow).
function checkoutMeaning(type: string, session: StripeObject): Meaning | null {
  if (session.mode !== 'payment') return null;
  const at = (status: PaymentStatus): Meaning => ({ status, amount: minorUnits(session.amount_total) });
  switch (type) {
    case 'checkout.session.completed':
      if (session.payment_status === 'paid') return at('paid');
      return session.payment_status === 'unpaid' ? at('pending') : null;
    case 'checkout.session.async_payment_succeeded':
      return at('paid');
    case 'checkout.session.async_payment_failed':
      return at('failed');
    case 'checkout.session.expired':
      return at('canceled');
    default:
      return null;
  }
}

function meaningOf(type: string, object: StripeObject): Meaning | null {
  if (type.startsWith('charge.dispute.')) return disputeMeaning(type, object);
  if (type.startsWith('charge.')) return chargeMeaning(type, object);
  if (type.startsWith('payment_intent.')) return paymentIntentMeaning(type, object);
  if (type.startsWith('checkout.session.') && idOf(object.payment_intent) !== undefined) return checkoutMeaning(type, object);
  return null;
}

export function toStripePaymentFact(event: StoredEvent): PaymentFact | null {
  const object = (event.payload as { data?: { object?: StripeObject } }).data?.object;
  if (!object || typeof object !== 'object') return null;
  const meaning = meaningOf(event.eventType, object);
  const keys = meaning && stripePaymentKeys(event.eventType, object);
  if (!meaning || !keys) return null;
  const currency = upperCurrency(object.currency);
  const inMinorUnits = (amount: number | undefined) => (amount === undefined ? undefined : stripeAmountInMinorUnits(amount, currency));
  const fact = chargeFact(keys.key, meaning.status, event.occurredAt, {
    amount: inMinorUnits(meaning.amount),
    amountRefunded: inMinorUnits(meaning.amountRefunded),
    currency,
  });
  return {
    ...fact,
    ...(meaning.inquiry === undefined ? {} : { inquiry: meaning.inquiry }),
    ...(keys.legacyChargeId === undefined ? {} : { legacyChargeId: keys.legacyChargeId }),
  };
}

export function createStripeDriver(settings: ProviderSettings): ProviderDriver {
  const fingerprints = secretFingerprints(settings.secrets);
  function verify(request: WebhookRequest, now: Date): SecretSignatureProof {
    const header = parseStripeSignatureHeader(requireHeader(request.header('stripe-signature'), 'Stripe-Signature'));
    assertTimestampWithinTolerance(header.timestamp, now, settings.signatureToleranceSeconds);
    const expected = settings.secrets.map((secret) => hmac('sha256', secret, `${header.timestamp}.`, request.rawBody));
    const matched = matchingDigestIndex(expected, header.signatures);
    if (matched < 0) {
      throw new SignatureError(
        'signature_mismatch',
        'No v1 signature matches the configured secret(s). Check the whsec_ secret of this endpoint, and that the body reaches the inbox unmodified.',
      );
    }
    return {
      scheme: 'stripe-v1',
      secret: secretMatch(fingerprints, matched),
      signedAt: new Date(header.timestamp * 1000).toISOString(),
      verifiedAt: now.toISOString(),
      signed: signedMaterial(request, ['stripe-signature']),
    };
  }
  return {
    name: 'stripe',
    verify,
    reverify: (stored) => reverifySignature(verify, stored),
    parse(request: WebhookRequest): NormalizedEvent {
      const { json, envelope: event } = parseJsonBody(request.rawBody, envelope, 'Stripe');
      return {
        eventId: event.id,
        eventType: event.type,
        resourceId: stripePaymentKeys(event.type, event.data.object)?.key ?? null,
        occurredAt: new Date(event.created * 1000),
        payload: json,
        account: event.account ?? null,
      };
    },
    toPaymentFact: toStripePaymentFact,
  };
}

// Live mode resends for up to 3 days; events can be resent by hand for 30 days, but those carry
// the same id and are exactly the duplicates the dedupe window exists for: keep the default 30 d+.
export const stripeDriver: DriverDefinition = { create: createStripeDriver, requiresSecret: true, resendWindowDays: 3 };
