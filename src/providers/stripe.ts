import { z } from 'zod';
import { SignatureError } from '../errors.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, StoredEvent, WebhookRequest } from './types.ts';
import { parseJsonBody } from './json-body.ts';
import { anyDigestMatches, assertTimestampWithinTolerance, hmac, requireHeader } from './signature.ts';
import { stripePaymentKeys, toStripePaymentFact } from './stripe-facts.ts';

/**
 * Stripe: `Stripe-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 over `${t}.${rawBody}`
 * keyed with the whole `whsec_…` string (not base64-decoded, unlike Standard Webhooks). Any v1 may
 * match (Stripe signs with old and new secrets while a secret is rolled); v0 is ignored.
 * Dedupe key: the event `id` (evt_…), stable across resends.
 * Resource: the payment the event is about (stripe-facts.ts says which id that is).
 */

const envelope = z.object({
  id: z.string().min(1),
  type: z.string().min(1),
  created: z.number().int().nonnegative(),
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});

interface StripeSignatureHeader {
  timestamp: number;
  signatures: Buffer[];
}

export function parseStripeSignatureHeader(header: string): StripeSignatureHeader {
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const separator = item.indexOf('=');
    if (separator < 0) continue;
    const key = item.slice(0, separator).trim();
    const value = item.slice(separator + 1).trim();
    if (key === 't' && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || signatures.length === 0) {
    throw new SignatureError('signature_malformed', 'The Stripe-Signature header has no t= timestamp or no v1= signature.');
  }
  return { timestamp, signatures };
}

export function createStripeDriver(settings: ProviderSettings): ProviderDriver {
  return {
    name: 'stripe',
    verify(request: WebhookRequest, now: Date): void {
      const header = parseStripeSignatureHeader(requireHeader(request.header('stripe-signature'), 'Stripe-Signature'));
      assertTimestampWithinTolerance(header.timestamp, now, settings.signatureToleranceSeconds);
      const expected = settings.secrets.map((secret) => hmac('sha256', secret, `${header.timestamp}.`, request.rawBody));
      if (!anyDigestMatches(expected, header.signatures)) {
        throw new SignatureError(
          'signature_mismatch',
          'No v1 signature matches the configured secret(s). Check the whsec_ secret of this endpoint, and that the body reaches the inbox unmodified.',
        );
      }
    },
    parse(request: WebhookRequest): NormalizedEvent {
      const { json, envelope: event } = parseJsonBody(request.rawBody, envelope, 'Stripe');
      return {
        eventId: event.id,
        eventType: event.type,
        resourceId: stripePaymentKeys(event.type, event.data.object)?.key ?? null,
        occurredAt: new Date(event.created * 1000),
        payload: json,
      };
    },
    toPaymentFact: toStripePaymentFact,
  };
}

// Live mode resends for up to 3 days; events can be resent by hand for 30 days, but those carry
// the same id and are exactly the duplicates the dedupe window exists for: keep the default 30 d+.
export const stripeDriver: DriverDefinition = { create: createStripeDriver, requiresSecret: true, resendWindowDays: 3 };
