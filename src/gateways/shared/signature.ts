import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SignatureError } from '../../errors.ts';

/**
 * Constant-time comparison. Unequal lengths return early: the length of a signature is public
 * (fixed by its algorithm), only its bytes are secret.
 */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export function hmac(algorithm: 'sha256' | 'sha1', key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/**
 * The index of the first expected digest that equals any candidate (several secrets × several
 * signatures: a rotation), or -1. Every pair is compared, no early exit: the time taken does not
 * reveal whether or where a signature came close.
 */
export function matchingDigestIndex(expected: Buffer[], candidates: Buffer[]): number {
  let matched = -1;
  expected.forEach((e, index) => {
    for (const c of candidates) if (constantTimeEqual(e, c) && matched < 0) matched = index;
  });
  return matched;
}

/** Rejects a signed timestamp further than `toleranceSeconds` from now, in either direction. */
export function assertTimestampWithinTolerance(timestampSeconds: number, now: Date, toleranceSeconds: number): void {
  const skew = Math.abs(now.getTime() / 1000 - timestampSeconds);
  if (skew > toleranceSeconds) {
    throw new SignatureError(
      'timestamp_outside_tolerance',
      `The signed timestamp is ${Math.round(skew)} s away from this server's clock (tolerance ${toleranceSeconds} s). Check the server clock, or whether this is a replayed delivery.`,
    );
  }
}

export function requireHeader(value: string | undefined, header: string): string {
  if (value === undefined || value.trim() === '') {
    throw new SignatureError('signature_missing', `The ${header} header is missing. Is the webhook secret configured at the gateway for this endpoint?`);
  }
  return value;
}

/**
 * A static token (Asaas, Zoop) against every configured token, in constant time: the index of the one it is, or -1. Both sides are
 * hashed first so the comparison is between equal-length digests: the token's length stays secret.
 */
export function matchingTokenIndex(received: string, tokens: readonly string[]): number {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return matchingDigestIndex(tokens.map(digest), [digest(received)]);
}

/**
 * Decodes a hex or base64 signature, checking it has the digest's length. Undefined when it is
 * not one: Node's base64 decoder skips foreign characters, so the length check is what catches garbage.
 */
export function decodeDigest(value: string, encoding: 'hex' | 'base64', digestBytes: number): Buffer | undefined {
  const trimmed = value.trim();
  if (encoding === 'hex') {
    return new RegExp(`^[0-9a-fA-F]{${digestBytes * 2}}$`).test(trimmed) ? Buffer.from(trimmed, 'hex') : undefined;
  }
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  const bytes = Buffer.from(trimmed, 'base64');
  return bytes.length === digestBytes ? bytes : undefined;
}

export const digestBytes = { sha256: 32, sha1: 20 } as const;
