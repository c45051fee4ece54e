import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function equalSecrets(a: string, b: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}
