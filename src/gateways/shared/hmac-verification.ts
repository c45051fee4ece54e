import { SignatureError } from '../../errors.ts';
import type { ProviderDriver, ProviderSettings, WebhookRequest } from './webhook-driver.ts';
import { type SecretSignatureProof, secretMatch } from './proof.ts';
import { reverifySignature } from './reverify.ts';
import { secretFingerprints } from './secret-fingerprint.ts';
import { assertTimestampWithinTolerance, decodeDigest, digestBytes, hmac, matchingDigestIndex, requireHeader } from './signature.ts';
import { signedMaterial } from './signed-material.ts';
import { fromUnixSecondsOrMillis } from './timestamps.ts';

/**
 * A body signed with HMAC and a shared secret, the signature in one header: the scheme most
 * gateways use (GitHub, Shopify, Pagar.me postbacks, and many Brazilian gateways). The named
 * drivers reuse `verifyHmacSignature` with their own constants; the generic `hmac` driver takes
 * the scheme and the field paths from INBOX_CONFIG.
 *
 * Signed content: the raw body, or `${timestamp}${separator}${rawBody}` when a timestamp header is
 * configured (then also checked against the tolerance, both directions).
 * Dedupe key (generic driver): the id at idHeader/idPath, else the derived key (derived-key.ts).
 */

export interface HmacScheme {
  /** Lower-case header name. */
  header: string;
  algorithm: 'sha256' | 'sha1';
  encoding: 'hex' | 'base64';
  /** Text before the digest (`sha256=`); '' for none. */
  prefix: string;
  /** False when some senders omit the prefix (Pagar.me postbacks: `sha1=<hex>` or bare hex). */
  prefixRequired: boolean;
  timestamp?: { header: string; separator: string };
}

function readSignature(scheme: HmacScheme, value: string): Buffer {
  let digest = value.trim();
  const hasPrefix = scheme.prefix !== '' && digest.toLowerCase().startsWith(scheme.prefix.toLowerCase());
  if (hasPrefix) digest = digest.slice(scheme.prefix.length);
  const expected = `${scheme.prefix ? `"${scheme.prefix}" followed by ` : ''}an HMAC-${scheme.algorithm.toUpperCase()} in ${scheme.encoding}`;
  if (scheme.prefix !== '' && scheme.prefixRequired && !hasPrefix) {
    throw new SignatureError('signature_malformed', `The ${scheme.header} header does not start with "${scheme.prefix}"; expected ${expected}.`);
  }
  const decoded = decodeDigest(digest, scheme.encoding, digestBytes[scheme.algorithm]);
  if (!decoded) {
    const length = scheme.encoding === 'hex' ? `${digestBytes[scheme.algorithm] * 2} hex digits` : `${digestBytes[scheme.algorithm]} bytes`;
    throw new SignatureError(
      'signature_malformed',
      `The ${scheme.header} header's digest is not an HMAC-${scheme.algorithm.toUpperCase()} in ${scheme.encoding} (${length}); expected ${expected}.`,
    );
  }
  return decoded;
}

function signedTimestamp(scheme: HmacScheme, request: WebhookRequest, now: Date, toleranceSeconds: number): { prefix: string; signedAt: Date | null } {
  if (!scheme.timestamp) return { prefix: '', signedAt: null };
  const value = requireHeader(request.header(scheme.timestamp.header), scheme.timestamp.header).trim();
  if (!/^\d{1,16}$/.test(value)) {
    throw new SignatureError('signature_malformed', `The ${scheme.timestamp.header} header is not a unix timestamp.`);
  }
  const signedAt = fromUnixSecondsOrMillis(Number(value));
  assertTimestampWithinTolerance(signedAt.getTime() / 1000, now, toleranceSeconds);
  return { prefix: `${value}${scheme.timestamp.separator}`, signedAt };
}

/** The configured secrets of an HMAC provider, with their fingerprints (computed once, at start). */
export interface HmacSecrets {
  secrets: readonly string[];
  fingerprints: readonly string[];
}

export const hmacSecrets = (secrets: readonly string[]): HmacSecrets => ({ secrets, fingerprints: secretFingerprints(secrets) });

/** Throws SignatureError unless one of the secrets signed the raw body under `scheme`; answers which one did. */
export function verifyHmacSignature(scheme: HmacScheme, request: WebhookRequest, keys: HmacSecrets, now: Date, toleranceSeconds: number): SecretSignatureProof {
  const signature = readSignature(scheme, requireHeader(request.header(scheme.header), scheme.header));
  const signed = signedTimestamp(scheme, request, now, toleranceSeconds);
  const expected = keys.secrets.map((secret) => hmac(scheme.algorithm, secret, signed.prefix, request.rawBody));
  const matched = matchingDigestIndex(expected, [signature]);
  if (matched < 0) {
    throw new SignatureError(
      'signature_mismatch',
      `The ${scheme.header} signature does not match the configured secret(s). Check the secret, and that the body reaches the inbox unmodified (no proxy re-encoding it).`,
    );
  }
  return {
    scheme: `hmac-${scheme.algorithm}`,
    secret: secretMatch(keys.fingerprints, matched),
    signedAt: signed.signedAt?.toISOString() ?? null,
    verifiedAt: now.toISOString(),
    signed: signedMaterial(request, scheme.timestamp ? [scheme.header, scheme.timestamp.header] : [scheme.header]),
  };
}

/** The ProviderDriver verify/reverify pair of an HMAC scheme. */
export function hmacVerification(scheme: HmacScheme, settings: ProviderSettings): Pick<ProviderDriver, 'verify' | 'reverify'> {
  const keys = hmacSecrets(settings.secrets);
  const verify = (request: WebhookRequest, now: Date) => verifyHmacSignature(scheme, request, keys, now, settings.signatureToleranceSeconds);
  return { verify, reverify: (stored) => reverifySignature(verify, stored) };
}
