import { z } from 'zod';
import { ConfigError, MalformedPayloadError, SignatureError } from '../../errors.ts';
import type { DriverDefinition, NormalizedEvent, ProviderDriver, ProviderSettings, WebhookRequest } from '../shared/webhook-driver.ts';
import { parseDriverOptions } from '../shared/driver-options.ts';
import { parseJson, readIdentifier, readPath } from '../shared/json-body.ts';
import { type SecretSignatureProof, secretMatch } from '../shared/proof.ts';
import { reverifySignature } from '../shared/reverify.ts';
import { secretFingerprints } from '../shared/secret-fingerprint.ts';
import { assertTimestampWithinTolerance, decodeDigest, digestBytes, hmac, matchingDigestIndex, requireHeader } from '../shared/signature.ts';
import { signedMaterial } from '../shared/signed-material.ts';
import { timestampFromJson } from '../shared/timestamps.ts';

/**
 * Standard Webhooks (https://www.standardwebhooks.com; Svix and the many senders built on it):
 * `webhook-id`, `webhook-timestamp` (unix seconds), `webhook-signature: v1,<base64> [v1,<base64> …]`,
 * HMAC-SHA256 over `${id}.${timestamp}.${rawBody}` keyed with the base64-DECODED part of
 * `whsec_<base64>` (unlike Stripe, which keys with the whole string). Any v1 may match (rotation);
 * other versions (`v1a` = ed25519, future ones) are skipped, as the reference library does. The
 * timestamp must be within the tolerance in both directions. Svix's own `svix-*` header names are
 * accepted too (Svix libraries read both).
 * Dedupe key: `webhook-id`, the same on every retry of a message.
 * Fields: type `type`, resource `data.id`, occurred_at `timestamp` (ISO) — paths configurable;
 * without a body timestamp, the signed `webhook-timestamp` (the attempt's time) stands in.
 */

const optionsSchema = z.strictObject({
  typePath: z.string().min(1).default('type'),
  resourcePath: z.string().min(1).default('data.id'),
  occurredAtPath: z.string().min(1).default('timestamp'),
});

function header(request: WebhookRequest, name: 'id' | 'timestamp' | 'signature'): string | undefined {
  return request.header(`webhook-${name}`) ?? request.header(`svix-${name}`);
}

/** `whsec_<base64>` → key bytes. Throws ConfigError: a secret that is not one can never verify. */
export function standardWebhooksKey(secret: string, index: number): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length === 0) {
    throw new ConfigError([`secret #${index + 1} is not a Standard Webhooks secret (whsec_ followed by base64)`]);
  }
  return key;
}

/** The v1 digests of a `webhook-signature` header; other versions and odd entries are skipped, as the reference library does. */
function v1Signatures(value: string): Buffer[] {
  const entries = value
    .trim()
    .split(/\s+/)
    .map((entry) => entry.split(','))
    .filter((parts) => parts.length === 2 && parts[0] !== '' && parts[1] !== '');
  if (entries.length === 0) {
    throw new SignatureError('signature_malformed', 'The webhook-signature header is not a space-separated list of <version>,<base64> (v1,K5oZ…).');
  }
  const v1 = entries.filter(([version]) => version === 'v1').map(([, signature]) => signature!);
  const digests = v1.map((signature) => decodeDigest(signature, 'base64', digestBytes.sha256)).filter((digest) => digest !== undefined);
  // Versions other than v1 are skipped (the reference library's rule); a v1 that is not a digest at all is said as such.
  if (v1.length > 0 && digests.length === 0) {
    throw new SignatureError('signature_malformed', "The webhook-signature header's v1 signature is not an HMAC-SHA256 in base64 (32 bytes).");
  }
  return digests;
}

const SIGNED_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'svix-id', 'svix-timestamp', 'svix-signature'];

function verifyStandardWebhook(
  request: WebhookRequest,
  keys: Buffer[],
  fingerprints: readonly string[],
  now: Date,
  toleranceSeconds: number,
): SecretSignatureProof {
  const id = requireHeader(header(request, 'id'), 'webhook-id');
  const timestamp = requireHeader(header(request, 'timestamp'), 'webhook-timestamp');
  const signatures = v1Signatures(requireHeader(header(request, 'signature'), 'webhook-signature'));
  if (!/^\d+$/.test(timestamp)) throw new SignatureError('signature_malformed', 'The webhook-timestamp header is not an integer of unix seconds.');
  assertTimestampWithinTolerance(Number(timestamp), now, toleranceSeconds);
  const expected = keys.map((key) => hmac('sha256', key, `${id}.${timestamp}.`, request.rawBody));
  const matched = matchingDigestIndex(expected, signatures);
  if (matched < 0) {
    throw new SignatureError(
      'signature_mismatch',
      signatures.length === 0
        ? 'The webhook-signature header has no v1 (HMAC-SHA256) signature; only v1 is supported.'
        : 'No v1 signature matches the configured whsec_ secret(s). Check the endpoint secret, and that the body reaches the inbox unmodified.',
    );
  }
  return {
    scheme: 'standard-webhooks',
    secret: secretMatch(fingerprints, matched),
    signedAt: new Date(Number(timestamp) * 1000).toISOString(),
    verifiedAt: now.toISOString(),
    signed: signedMaterial(request, SIGNED_HEADERS),
  };
}

export function createStandardWebhooksDriver(settings: ProviderSettings): ProviderDriver {
  const options = parseDriverOptions(optionsSchema, settings.options);
  const problems: string[] = [];
  const keys = settings.secrets.flatMap((secret, index) => {
    try {
      return [standardWebhooksKey(secret, index)];
    } catch (error) {
      if (error instanceof ConfigError) problems.push(...error.problems);
      return [];
    }
  });
  if (problems.length > 0) throw new ConfigError(problems);
  const fingerprints = secretFingerprints(settings.secrets);
  const verify = (request: WebhookRequest, now: Date) => verifyStandardWebhook(request, keys, fingerprints, now, settings.signatureToleranceSeconds);
  return {
    name: 'standard-webhooks',
    verify,
    reverify: (stored) => reverifySignature(verify, stored),
    parse(request: WebhookRequest): NormalizedEvent {
      const json = parseJson(request.rawBody);
      const eventType = readIdentifier(json, options.typePath);
      if (eventType === undefined) throw new MalformedPayloadError(`The body has no event type at "${options.typePath}".`);
      const rawTime = readPath(json, options.occurredAtPath);
      const occurredAt = rawTime === undefined ? timestampFromJson(header(request, 'timestamp')) : timestampFromJson(rawTime);
      if (occurredAt === undefined) throw new MalformedPayloadError(`The event time at "${options.occurredAtPath}" is not a timestamp.`);
      return {
        eventId: requireHeader(header(request, 'id'), 'webhook-id'),
        eventType,
        resourceId: readIdentifier(json, options.resourcePath) ?? null,
        occurredAt,
        // The webhook-timestamp header is the time of this attempt (it must be within 5 minutes).
        occurredAtIsRequestTime: rawTime === undefined,
        payload: json,
      };
    },
    toPaymentFact: () => null,
  };
}

// Svix retries for about 27.5 hours and disables an endpoint after 5 days of failures; the spec's
// example schedule spans about 3.2 days. 5 days covers both.
export const standardWebhooksDriver: DriverDefinition = { create: createStandardWebhooksDriver, requiresSecret: true, resendWindowDays: 5 };
