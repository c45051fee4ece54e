import { createHmac, timingSafeEqual } from 'node:crypto';

/** Stripe's default tolerance for the signed timestamp (its SDK's `DEFAULT_TOLERANCE`). */
const TOLERANCE_SECONDS = 300;

/**
 * The Stripe signature check both bench servers (the bare baseline and the peer) run on the raw
 * body, written from Stripe's documented scheme: `Stripe-Signature: t=<unix s>,v1=<hex>…`, any v1
 * equal (in constant time) to HMAC-SHA256(secret, "<t>.<body>"), t within five minutes. Shared so
 * that the peer's request work is exactly the baseline's and the difference between them is the
 * database alone.
 */
export function stripeSignatureIsValid(rawBody: Buffer, header: string | undefined, secret: string, nowSeconds: number): boolean {
  if (!header) return false;
  let timestamp = '';
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const [key, value] = item.split('=', 2);
    if (key === 't' && value) timestamp = value;
    if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  return signatures.some((signature) => timingSafeEqual(signature, expected));
}
