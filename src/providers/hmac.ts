import { z } from 'zod';
import { SignatureError } from '../errors.ts';
import type { DriverDefinition, ProviderDriver, ProviderSettings, WebhookRequest } from './types.ts';
import { parseDriverOptions } from './driver-options.ts';
import { fieldMappingShape, parseMappedEvent, requiringTypeSource } from './mapped-event.ts';
import { anyDigestMatches, assertTimestampWithinTolerance, decodeDigest, digestBytes, hmac, requireHeader } from './signature.ts';
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
  const decoded = scheme.prefix !== '' && scheme.prefixRequired && !hasPrefix ? undefined : decodeDigest(digest, scheme.encoding, digestBytes[scheme.algorithm]);
  if (!decoded) {
    throw new SignatureError(
      'signature_malformed',
      `The ${scheme.header} header is not ${scheme.prefix ? `"${scheme.prefix}" followed by ` : ''}a ${scheme.encoding} HMAC-${scheme.algorithm.toUpperCase()} digest.`,
    );
  }
  return decoded;
}

function signedTimestampPrefix(scheme: HmacScheme, request: WebhookRequest, now: Date, toleranceSeconds: number): string {
  if (!scheme.timestamp) return '';
  const value = requireHeader(request.header(scheme.timestamp.header), scheme.timestamp.header).trim();
  if (!/^\d{1,16}$/.test(value)) {
    throw new SignatureError('signature_malformed', `The ${scheme.timestamp.header} header is not a unix timestamp.`);
  }
  assertTimestampWithinTolerance(fromUnixSecondsOrMillis(Number(value)).getTime() / 1000, now, toleranceSeconds);
  return `${value}${scheme.timestamp.separator}`;
}

/** Throws SignatureError unless one of `secrets` signed the raw body under `scheme`. */
export function verifyHmacSignature(scheme: HmacScheme, request: WebhookRequest, secrets: string[], now: Date, toleranceSeconds: number): void {
  const signature = readSignature(scheme, requireHeader(request.header(scheme.header), scheme.header));
  const signedPrefix = signedTimestampPrefix(scheme, request, now, toleranceSeconds);
  const expected = secrets.map((secret) => hmac(scheme.algorithm, secret, signedPrefix, request.rawBody));
  if (!anyDigestMatches(expected, [signature])) {
    throw new SignatureError(
      'signature_mismatch',
      `The ${scheme.header} signature does not match the configured secret(s). Check the secret, and that the body reaches the inbox unmodified (no proxy re-encoding it).`,
    );
  }
}

const optionsSchema = requiringTypeSource(
  z.strictObject({
    header: z.string().min(1).transform((h) => h.toLowerCase()),
    algorithm: z.enum(['sha256', 'sha1']).default('sha256'),
    encoding: z.enum(['hex', 'base64']).default('hex'),
    prefix: z.string().default(''),
    prefixRequired: z.boolean().default(true),
    timestampHeader: z.string().min(1).optional(),
    timestampSeparator: z.string().default('.'),
    ...fieldMappingShape,
  }),
);

export function createHmacDriver(settings: ProviderSettings): ProviderDriver {
  const options = parseDriverOptions(optionsSchema, settings.options);
  const scheme: HmacScheme = {
    header: options.header,
    algorithm: options.algorithm,
    encoding: options.encoding,
    prefix: options.prefix,
    prefixRequired: options.prefixRequired,
    timestamp: options.timestampHeader ? { header: options.timestampHeader.toLowerCase(), separator: options.timestampSeparator } : undefined,
  };
  return {
    name: 'hmac',
    verify: (request, now) => verifyHmacSignature(scheme, request, settings.secrets, now, settings.signatureToleranceSeconds),
    parse: (request, now) => parseMappedEvent(request, now, options),
    // A generic gateway's vocabulary is unknown: its events are stored and left to registered handlers.
    toPaymentFact: () => null,
  };
}

// The gateway behind a generic driver is unknown, so its resend window is too: 14 days covers the
// longest documented schedule among the gateways here (Asaas keeps paused events 14 days) and
// stays under the default 30-day retention.
export const hmacDriver: DriverDefinition = { create: createHmacDriver, requiresSecret: true, resendWindowDays: 14 };
