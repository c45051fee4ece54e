import { scryptSync } from 'node:crypto';

/**
 * A short fingerprint of a configured secret, stored in each event's proof of verification so an
 * operator can tell which secret signed it without the secret ever being written anywhere.
 *
 * Slow on purpose: scrypt (N = 2^14, r = 8, ~50–80 ms) under a fixed salt, so a fingerprint read
 * from the database or an archive cannot be used to try a dictionary of short or human-chosen
 * secrets at hash speed. The salt is fixed (not random per instance) because fingerprints must
 * compare across instances, restarts and `inboxctl`. Only 48 bits are kept: enough to tell the
 * few secrets of a rotation apart, too few to confirm a guess of a strong secret with certainty.
 *
 * Computed once per secret when a driver is created, never per request; the cache keeps a
 * process that builds the same drivers again (tests, `inboxctl`) from paying for it twice.
 */
const SALT = 'webhook-inbox/secret-fingerprint/v1';
const PARAMETERS = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const FINGERPRINT_BYTES = 6;

const computed = new Map<string, string>();

export function secretFingerprint(secret: string): string {
  let fingerprint = computed.get(secret);
  if (fingerprint === undefined) {
    fingerprint = scryptSync(secret, SALT, FINGERPRINT_BYTES, PARAMETERS).toString('hex');
    computed.set(secret, fingerprint);
  }
  return fingerprint;
}

/** The fingerprints of a rotation list, in its order. */
export function secretFingerprints(secrets: readonly string[]): readonly string[] {
  return secrets.map(secretFingerprint);
}
