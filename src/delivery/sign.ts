import { type KeyObject, createHmac, createSecretKey } from 'node:crypto';

/**
 * A destination's signing key: the bytes behind `whsec_<base64>` (the prefix is no part of the key),
 * as a KeyObject made once: createHmac re-checks and wraps a Buffer key on every call, ~20 µs of
 * CPU a signature against ~4–5 µs with a KeyObject (50,000 signatures each, Node 24, load ~12).
 */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(secret.indexOf('_') + 1), 'base64'));
}

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Standard Webhooks' symmetric scheme: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
 * The id is the event's stable id (a resend carries the same one, so the application dedupes on
 * it); the timestamp is this attempt's, in unix seconds, so a retry is signed afresh and stays
 * inside the verifier's tolerance (±5 minutes in the reference libraries).
 */
export function signWebhook(key: KeyObject, id: string, at: Date, body: string): StandardWebhookHeaders {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
