import { type KeyObject, createHmac, createPrivateKey, createPublicKey, createSecretKey, sign } from 'node:crypto';

/**
 * One of a destination's signing keys, made once from its secret: `whsec_<base64>` signs `v1`
 * (HMAC-SHA256; the prefix is no part of the key), `whsk_<base64 of a 32-byte seed>` signs `v1a`
 * (ed25519, as the Standard Webhooks libraries read such keys). A KeyObject made once: createHmac
 * re-checks and wraps a Buffer key on every call, ~20 µs of CPU a signature against ~4–5 µs with a
 * KeyObject (50,000 signatures each, Node 24, load ~12).
 */
export type SigningKey = { scheme: 'v1'; key: KeyObject } | { scheme: 'v1a'; key: KeyObject };

/** PKCS#8 DER before an ed25519 seed (RFC 8410): node:crypto imports a raw seed only this way. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** SPKI DER before an ed25519 public key (RFC 8410), the 12 bytes stripped for `whpk_`. */
const ED25519_SPKI_PREFIX_BYTES = 12;

function ed25519PrivateKey(seed: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

export function signingKey(secret: string): SigningKey {
  const bytes = Buffer.from(secret.slice(secret.indexOf('_') + 1), 'base64');
  if (secret.startsWith('whsk_')) return { scheme: 'v1a', key: ed25519PrivateKey(bytes) };
  return { scheme: 'v1', key: createSecretKey(bytes) };
}

/** The keys of a destination, in the order its secrets are configured (the signatures' order). */
export function signingKeys(secrets: readonly string[]): SigningKey[] {
  return secrets.map(signingKey);
}

/**
 * The `whpk_` public key a consumer verifies `v1a` signatures with, for a `whsk_` secret; undefined
 * for a `whsec_` one (a shared secret has no public half). Safe to log and to hand out.
 */
export function publicKeyOf(secret: string): string | undefined {
  if (!secret.startsWith('whsk_')) return undefined;
  const seed = Buffer.from(secret.slice('whsk_'.length), 'base64');
  const spki = createPublicKey(ed25519PrivateKey(seed)).export({ format: 'der', type: 'spki' });
  return `whpk_${spki.subarray(ED25519_SPKI_PREFIX_BYTES).toString('base64')}`;
}

export interface StandardWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** One signature of `id.timestamp.body`, versioned: `v1,<base64 HMAC-SHA256>` or `v1a,<base64 ed25519>`. */
function signature(key: SigningKey, signed: string): string {
  if (key.scheme === 'v1a') return `v1a,${sign(null, Buffer.from(signed), key.key).toString('base64')}`;
  return `v1,${createHmac('sha256', key.key).update(signed).digest('base64')}`;
}

/**
 * Standard Webhooks: every key signs `id.timestamp.body`, and the signatures go space-separated in
 * one `webhook-signature` header, so during a rotation a consumer holding either secret verifies
 * (the reference libraries try each signature of their version). The id is the event's stable id
 * (a resend carries the same one, so the application dedupes on it); the timestamp is this
 * attempt's, in unix seconds, so a retry is signed afresh and stays inside the verifier's tolerance
 * (±5 minutes in the reference libraries).
 */
export function signWebhook(keys: readonly SigningKey[], id: string, at: Date, body: string): StandardWebhookHeaders {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signed = `${id}.${timestamp}.${body}`;
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': keys.map((key) => signature(key, signed)).join(' ') };
}
