import { KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import { MalformedPayloadError, SignatureError } from '../../errors.ts';
import type { PaymentFact, PaymentStatus } from '../../domain/payments/payment-fact.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, StoredEvent, WebhookRequest } from '../shared/webhook-driver.ts';
import { integerMinorUnits } from '../shared/amounts.ts';
import { parseDriverOptions } from '../shared/driver-options.ts';
import { parseJsonBody } from '../shared/json-body.ts';
import { type VerificationKeyFor, remoteVerificationKeys } from '../shared/jwks-keys.ts';
import { chargeFact, upperCurrency } from '../shared/payment-facts.ts';
import { type PagarmeProof, type Reverification, type StoredWebhookRequest, secretMatch } from '../shared/proof.ts';
import { reverifyByFingerprint, reverifySignature } from '../shared/reverify.ts';
import { secretFingerprints } from '../shared/secret-fingerprint.ts';
import { matchingTokenIndex, requireHeader } from '../shared/signature.ts';
import { signedMaterial } from '../shared/signed-material.ts';
import { pagarmeChargeSplit } from './split.ts';
import { parseLenientTimestamp } from '../shared/timestamps.ts';

/**
 * Pagar.me (Core API v5): `X-Webhook-Asymmetric-Signature: alg=RS256; kid=<key id>; signature=<base64url>`,
 * RSA-SHA256 (PKCS#1 v1.5) over the raw JSON body, verified with the key of that kid from
 * Pagar.me's JWKS (https://hubapi.pagar.me/.well-known/jwks.json, option `jwksUrl`), cached and
 * re-fetched on an unknown kid (../shared/jwks-keys.ts). Checked against the official validator
 * (pagarme/ecommerce-module-core `WebhookValidatorService`): header split on `;` then on the first
 * `=`; alg must be RS256; key matched on kid, kty RSA, use sig, alg RS256 if present.
 * Not verified here: whether EVERY v5 webhook carries the header (the plugins only check it since
 * mid-2025) [UNVERIFIED] — this driver requires it.
 * Optional Basic Auth: the dashboard lets a webhook carry a user and password; configure them as
 * the provider's secret (`user:password`, WEBHOOK_SECRET_PAGARME) and they are required too.
 * Dedupe key: `id` (`hook_…`, one per notification, presumably the same on retries [UNVERIFIED]).
 * Type `type`; resource `data.id` (`ch_…` for charge.*, `or_…` for order.*); occurred_at
 * `created_at`, ISO-8601, parsed leniently (up to 7 fractional digits have been seen, Z or offset).
 * Amounts are already integer centavos.
 */

const DEFAULT_JWKS_URL = 'https://hubapi.pagar.me/.well-known/jwks.json';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const optionsSchema = z.strictObject({
  jwksUrl: z
    .url()
    .default(DEFAULT_JWKS_URL)
    .refine((value) => {
      const url = new URL(value);
      return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
    }, 'must be https (plain http only on loopback, for tests)'),
  jwksCooldownSeconds: z.number().min(0).default(30),
  jwksCacheMaxAgeSeconds: z.number().positive().default(3600),
  jwksTimeoutMs: z.number().int().positive().max(10_000).default(3000),
});

interface AsymmetricSignature {
  kid: string;
  signature: Buffer;
}

export function parseAsymmetricSignatureHeader(value: string): AsymmetricSignature {
  const parts = new Map<string, string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) parts.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const malformed = (what: string) =>
    new SignatureError(
      'signature_malformed',
      `The X-Webhook-Asymmetric-Signature header ${what}; Pagar.me sends alg=RS256; kid=<key id>; signature=<base64url>.`,
    );
  const alg = parts.get('alg');
  const kid = parts.get('kid');
  const signature = parts.get('signature');
  if (!alg || !kid || !signature) {
    const missing = [!alg && 'alg=', !kid && 'kid=', !signature && 'signature='].filter(Boolean);
    throw malformed(`has no ${missing.join(', no ')}`);
  }
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(signature)) throw malformed('has a signature= that is not base64url');
  if (alg !== 'RS256') throw new SignatureError('signature_malformed', 'Unsupported signature algorithm (alg=); Pagar.me signs with RS256.');
  return { kid, signature: Buffer.from(signature, 'base64url') };
}

/** The index of the configured `user:password` the Authorization header carries. */
function matchingBasicAuth(request: WebhookRequest, credentials: readonly string[]): number {
  const header = requireHeader(request.header('authorization'), 'Authorization');
  const match = /^basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  const matched = match ? matchingTokenIndex(Buffer.from(match[1]!, 'base64').toString('utf8'), credentials) : -1;
  if (matched < 0) {
    throw new SignatureError('signature_mismatch', 'The Authorization header does not carry the Basic Auth user:password configured for this webhook.');
  }
  return matched;
}

const SIGNATURE_HEADER = 'x-webhook-asymmetric-signature';

interface BasicAuth {
  credentials: readonly string[];
  fingerprints: readonly string[];
}

async function verifyPagarme(request: WebhookRequest, keyFor: VerificationKeyFor, basicAuth: BasicAuth, now: Date): Promise<PagarmeProof> {
  const header = parseAsymmetricSignatureHeader(requireHeader(request.header(SIGNATURE_HEADER), 'X-Webhook-Asymmetric-Signature'));
  const credential = basicAuth.credentials.length > 0 ? matchingBasicAuth(request, basicAuth.credentials) : -1;
  const key = await keyFor(header.kid, 'RS256');
  if (!verify('sha256', request.rawBody, KeyObject.from(key), header.signature)) {
    throw new SignatureError(
      'signature_mismatch',
      "The RS256 signature does not verify with Pagar.me's key. Check that the body reaches the inbox unmodified.",
    );
  }
  return {
    scheme: 'pagarme-rs256',
    kid: header.kid,
    // The Basic Auth credential is the secret itself: only its fingerprint is kept.
    secret: credential < 0 ? null : secretMatch(basicAuth.fingerprints, credential),
    verifiedAt: now.toISOString(),
    signed: signedMaterial(request, [SIGNATURE_HEADER]),
  };
}

/**
 * Again on a stored delivery: the RS256 signature with the JWKS key of its kid as published now
 * (a key Pagar.me has withdrawn no longer verifies), and the Basic Auth credential, which was
 * never stored, by its fingerprint.
 */
async function reverifyPagarme(stored: StoredWebhookRequest, keyFor: VerificationKeyFor, basicAuth: BasicAuth): Promise<Reverification> {
  const signature = await reverifySignature((request, now) => verifyPagarme(request, keyFor, { credentials: [], fingerprints: [] }, now), stored);
  if (signature.outcome === 'no_match' || basicAuth.credentials.length === 0) return signature;
  return reverifyByFingerprint(basicAuth.fingerprints, stored.proof);
}

const envelope = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  created_at: z.string().min(1),
  data: z.record(z.string(), z.unknown()),
});

function parsePagarme(request: WebhookRequest): NormalizedEvent {
  const { json, envelope: event } = parseJsonBody(request.rawBody, envelope, 'Pagar.me');
  const occurredAt = parseLenientTimestamp(event.created_at);
  if (occurredAt === undefined) throw new MalformedPayloadError('created_at is not a timestamp.');
  const id = event.data.id;
  return { eventId: event.id, eventType: event.type, resourceId: typeof id === 'string' && id.length > 0 ? id : null, occurredAt, payload: json };
}

// Charge events in canonical terms (event list: docs.pagar.me "Lista de Events"; the v5 .NET SDK
// enum). Not mapped: charge.created/updated (no status change of their own), charge.underpaid (a
// boleto paid short is neither paid nor failed: an operator decides), charge.antifraud_approved /
// _manual / _pending (a payment event follows), order.* (the charge events carry the money).
const statusByEvent: Record<string, PaymentStatus> = {
  'charge.pending': 'pending',
  'charge.processing': 'pending',
  'charge.paid': 'paid',
  'charge.overpaid': 'paid',
  'charge.payment_failed': 'failed',
  'charge.antifraud_reproved': 'failed',
  'charge.refunded': 'refunded',
  'charge.partial_canceled': 'partially_refunded',
  'charge.chargedback': 'charged_back',
};

/**
 * v5 has no authorization event: an auth-only card charge is `pending` with its last transaction
 * `authorized_pending_capture` (docs.pagar.me "Cobrança"; the official module maps that to an
 * authorization), then `charge.paid` on capture, or a cancellation (below) when voided or when
 * the capture window lapses. Part of the hold released (`partial_void`, a charge.partial_canceled
 * of a charge never paid) leaves the rest held: still an authorization.
 */
export function isAuthorizedPendingCapture(charge: Record<string, unknown>): boolean {
  const transaction = lastTransactionStatus(charge);
  return transaction === 'authorized_pending_capture' || (transaction === 'partial_void' && !paidBeforeCancellation(charge));
}

function lastTransactionStatus(charge: Record<string, unknown>): unknown {
  const transaction = charge.last_transaction;
  return typeof transaction === 'object' && transaction !== null ? (transaction as Record<string, unknown>).status : undefined;
}

/**
 * Whether a charge Pagar.me reports `canceled` had been paid, so that cancelling it gave money back
 * (refunded), rather than releasing a hold or closing a boleto or pix nobody paid (canceled): v5
 * says `canceled` (and charge.refunded) for both. Its payloads leave out what is zero or null, so a
 * refunded card charge carries canceled_amount and canceled_at but neither paid_amount nor paid_at
 * (the charge.refunded of a Magento store Pagar.me's integrators published, 2025-01): the last
 * transaction tells, `refunded` / `partial_refunded` (an estorno of money taken) against `voided`,
 * `partial_void`, `expired`, `generated`, … (pagarme/ecommerce-module-core TransactionStatus).
 */
export function paidBeforeCancellation(charge: Record<string, unknown>): boolean {
  const transaction = lastTransactionStatus(charge);
  return transaction === 'refunded' || transaction === 'partial_refunded' || Boolean(charge.paid_at) || Number(charge.paid_amount) > 0;
}

function statusOf(eventType: string, charge: Record<string, unknown>): PaymentStatus | undefined {
  const status = statusByEvent[eventType];
  if (status === 'pending' && isAuthorizedPendingCapture(charge)) return 'authorized';
  if (status === 'refunded' && !paidBeforeCancellation(charge)) return 'canceled';
  // A partial void of a hold gives back nothing taken: the rest is still held.
  if (status === 'partially_refunded' && !paidBeforeCancellation(charge)) return 'authorized';
  return status;
}

/**
 * The payment's amount: the charge's, or what was paid when that is more (an overpaid boleto,
 * charge.overpaid). Pagar.me refunds what was paid, and a cancellation leaves paid_amount out, so
 * a canceled_amount above the charge's amount says the same.
 */
export function takenAmount(charge: Record<string, unknown>): number | undefined {
  const amount = integerMinorUnits(charge.amount);
  if (amount === undefined) return undefined;
  return Math.max(amount, integerMinorUnits(charge.paid_amount) ?? 0, integerMinorUnits(charge.canceled_amount) ?? 0);
}

/**
 * Events whose last transaction may be a cancellation's, with a split of its own (split.ts): the
 * charge's split is taken from its other events only, and the payment keeps it through these.
 */
const cancellationEvents = new Set(['charge.refunded', 'charge.partial_canceled', 'charge.chargedback']);

export function toPagarmePaymentFact(event: StoredEvent): PaymentFact | null {
  const charge = (event.payload as { data?: Record<string, unknown> }).data;
  if (!charge || event.resourceId === null || !event.eventType.startsWith('charge.')) return null;
  const status = statusOf(event.eventType, charge);
  if (!status) return null;
  const fact = chargeFact(event.resourceId, status, event.occurredAt, {
    amount: takenAmount(charge),
    amountRefunded: status === 'refunded' || status === 'partially_refunded' ? integerMinorUnits(charge.canceled_amount) : undefined,
    currency: upperCurrency(charge.currency),
  });
  const split = cancellationEvents.has(event.eventType) ? undefined : pagarmeChargeSplit(charge);
  return split ? { ...fact, split } : fact;
}

/** `keyFor` replaces the JWKS fetch (tests, or keys held elsewhere); by default the remote JWKS of the options. */
export function createPagarmeDriver(settings: ProviderSettings, keyFor?: VerificationKeyFor): ProviderDriver {
  const options = parseDriverOptions(optionsSchema, settings.options);
  const keys =
    keyFor ??
    remoteVerificationKeys({
      url: new URL(options.jwksUrl),
      cooldownMs: options.jwksCooldownSeconds * 1000,
      cacheMaxAgeMs: options.jwksCacheMaxAgeSeconds * 1000,
      timeoutMs: options.jwksTimeoutMs,
    });
  const basicAuth = { credentials: settings.secrets, fingerprints: secretFingerprints(settings.secrets) };
  return {
    name: 'pagarme',
    verify: (request, now) => verifyPagarme(request, keys, basicAuth, now),
    reverify: (stored) => reverifyPagarme(stored, keys, basicAuth),
    parse: parsePagarme,
    toPaymentFact: toPagarmePaymentFact,
  };
}

// The retry count is a dashboard setting and the schedule is not published; failed hooks can be
// resent through the API (same hook id). 14 days, as for the other unpublished windows here.
export const pagarmeDriver: DriverDefinition = { create: (settings) => createPagarmeDriver(settings), requiresSecret: false, resendWindowDays: 14 };
