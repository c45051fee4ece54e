import { z } from 'zod';
import { MalformedPayloadError, SignatureError } from '../../errors.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, WebhookRequest } from '../shared/webhook-driver.ts';
import { derivedEventKey } from '../shared/derived-key.ts';
import { parseDriverOptions } from '../shared/driver-options.ts';
import { parseJson, readIdentifier, readPath } from '../shared/json-body.ts';
import { type SecretSignatureProof, secretMatch } from '../shared/proof.ts';
import { reverifySignature } from '../shared/reverify.ts';
import { secretFingerprints } from '../shared/secret-fingerprint.ts';
import { assertTimestampWithinTolerance, decodeDigest, hmac, matchingDigestIndex, requireHeader } from '../shared/signature.ts';
import { signedMaterial } from '../shared/signed-material.ts';
import { fromUnixSecondsOrMillis, timestampFromJson } from '../shared/timestamps.ts';

/**
 * Mercado Pago: `x-signature: ts=<ts>,v1=<hex>`, HMAC-SHA256 keyed with the application's secret
 * signature over the manifest `id:<data.id>;request-id:<x-request-id>;ts:<ts>;`, where data.id
 * comes from the QUERY string (`?data.id=…&type=…`, appended by Mercado Pago) and any absent pair
 * is left out (official Node SDK `buildManifest`). The case of data.id: the docs say to lower-case
 * alphanumeric ids (Orders API `ORD…`), the official SDKs (Node since ac20999, Python) sign the
 * original case — the original is tried first, then the lower-cased one.
 * `ts` is used verbatim in the manifest; for the tolerance it is milliseconds from 1e12 on,
 * seconds below (the docs say ms, a later SDK fix says seconds). Whether Mercado Pago re-signs
 * each retry with a fresh ts is [UNVERIFIED]: option `checkTimestamp: false` turns the check off
 * if retries arrive with the original ts.
 * The signature covers data.id, not the body: the body's data.id must equal the signed one
 * (else 401), and nothing else in the body is trusted — these are thin notifications, and the
 * payment's state comes from refetching it (the default ordering for Mercado Pago).
 * Dedupe key: body `id` (the notification id; stable across retries is [UNVERIFIED] but is the
 * documented dedupe choice), else the derived key of (data.id, action/type, date_created).
 * Type: `action` (`payment.updated`), else `type` (the topic). Resource: data.id.
 * occurred_at: `date_created` (ms, µs or ns fractions, Z or offset), else the receipt time.
 * Unsigned notifications (QR Code in-person, legacy IPN `?topic=&id=`) are rejected: 401.
 */

const optionsSchema = z.strictObject({ checkTimestamp: z.boolean().default(true) });

interface SignatureHeader {
  ts: string;
  v1: Buffer;
}

/** Parsed like the official SDK: split on `,`, then on the first `=`, keys case-insensitive. */
function parseSignatureHeader(value: string): SignatureHeader {
  const parts = new Map<string, string>();
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) parts.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  const malformed = (what: string) =>
    new SignatureError('signature_malformed', `The x-signature header ${what}; Mercado Pago sends ts=<unix timestamp>,v1=<64 hex digits>.`);
  const ts = parts.get('ts');
  if (!ts) throw malformed('has no ts= timestamp');
  if (!/^\d{1,16}$/.test(ts)) throw malformed('has a ts= that is not a unix timestamp');
  if (parts.get('v1') === undefined) throw malformed('has no v1= signature');
  const v1 = decodeDigest(parts.get('v1')!, 'hex', 32);
  if (!v1) throw malformed('has a v1= that is not an HMAC-SHA256 in hex (64 hex digits)');
  return { ts, v1 };
}

function manifest(dataId: string | undefined, requestId: string | undefined, ts: string): string {
  return `${dataId ? `id:${dataId};` : ''}${requestId ? `request-id:${requestId};` : ''}ts:${ts};`;
}

function signedDataId(request: WebhookRequest): string | undefined {
  return request.query.get('data.id')?.trim() || undefined;
}

function verifyMercadoPago(
  request: WebhookRequest,
  secrets: readonly string[],
  fingerprints: readonly string[],
  now: Date,
  toleranceSeconds: number | undefined,
): SecretSignatureProof {
  const header = parseSignatureHeader(requireHeader(request.header('x-signature'), 'x-signature'));
  const dataId = signedDataId(request);
  const requestId = request.header('x-request-id')?.trim() || undefined;
  const idVariants = dataId && dataId.toLowerCase() !== dataId ? [dataId, dataId.toLowerCase()] : [dataId];
  const expected = secrets.flatMap((secret) => idVariants.map((id) => hmac('sha256', secret, manifest(id, requestId, header.ts))));
  const matched = matchingDigestIndex(expected, [header.v1]);
  if (matched < 0) {
    throw new SignatureError(
      'signature_mismatch',
      'The x-signature does not match the configured secret signature. Check the secret (Your integrations → Webhooks) and that the notification URL keeps the ?data.id= query Mercado Pago appends.',
    );
  }
  const signedAt = fromUnixSecondsOrMillis(Number(header.ts));
  if (toleranceSeconds !== undefined) assertTimestampWithinTolerance(signedAt.getTime() / 1000, now, toleranceSeconds);
  return {
    scheme: 'mercadopago',
    // Each secret was tried with each case of data.id, in secret order.
    secret: secretMatch(fingerprints, Math.floor(matched / idVariants.length)),
    signedAt: signedAt.toISOString(),
    verifiedAt: now.toISOString(),
    signed: signedMaterial(request, ['x-signature', 'x-request-id'], ['data.id']),
  };
}

function parseMercadoPago(request: WebhookRequest, now: Date): NormalizedEvent {
  const json = parseJson(request.rawBody);
  const bodyDataId = readIdentifier(json, 'data.id');
  const queryDataId = signedDataId(request);
  if (queryDataId && bodyDataId && queryDataId.toLowerCase() !== bodyDataId.toLowerCase()) {
    throw new SignatureError('signature_mismatch', "The body's data.id is not the signed data.id of the query string.");
  }
  const eventType = readIdentifier(json, 'action') ?? readIdentifier(json, 'type');
  if (!eventType) throw new MalformedPayloadError('The notification has neither action nor type.');
  const resourceId = queryDataId ?? bodyDataId ?? null;
  const rawTime = readPath(json, 'date_created');
  const sentAt = rawTime === undefined ? undefined : timestampFromJson(rawTime);
  if (rawTime !== undefined && sentAt === undefined) throw new MalformedPayloadError('date_created is not a timestamp.');
  const eventId = readIdentifier(json, 'id') ?? derivedEventKey({ resourceId, eventType, status: null, occurredAt: sentAt ?? null });
  return { eventId, eventType, resourceId, occurredAt: sentAt ?? now, occurredAtIsRequestTime: sentAt === undefined, payload: json };
}

export function createMercadoPagoDriver(settings: ProviderSettings): ProviderDriver {
  const options = parseDriverOptions(optionsSchema, settings.options);
  const tolerance = options.checkTimestamp ? settings.signatureToleranceSeconds : undefined;
  const fingerprints = secretFingerprints(settings.secrets);
  const verify = (request: WebhookRequest, now: Date) => verifyMercadoPago(request, settings.secrets, fingerprints, now, tolerance);
  return {
    name: 'mercadopago',
    verify,
    reverify: (stored) => reverifySignature(verify, stored),
    parse: parseMercadoPago,
    // Thin notifications: `payment.created`/`payment.updated` carry no status or amount. The fact
    // comes from refetching the payment (GET /v1/payments/{id}), not from this payload.
    toPaymentFact: () => null,
    // …so a payment notification (action payment.created/updated, or the older type "payment")
    // names the charge to re-read; order and other topics are no payment notices.
    toPaymentNotice: (event) =>
      event.resourceId !== null && (event.eventType === 'payment' || event.eventType.startsWith('payment.')) ? event.resourceId : null,
  };
}

// Retries every 15 minutes, then at growing intervals, "and continues": no end is published.
// 14 days, as for the other unpublished windows here.
export const mercadoPagoDriver: DriverDefinition = { create: createMercadoPagoDriver, requiresSecret: true, resendWindowDays: 14 };
