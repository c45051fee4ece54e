/**
 * The baseline: a bare Hono server on the same Node, doing the request work every receiver must do
 * — read the raw body, check the Stripe HMAC (and its timestamp), parse the JSON — and nothing
 * else: no database, no logging. Whatever the inbox does beyond this is the price of durability.
 * Run by bench/run.ts as a child process: `PORT=… WEBHOOK_SECRET_STRIPE=… node bench/baseline-server.ts`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const secret = process.env.WEBHOOK_SECRET_STRIPE ?? '';
const toleranceSeconds = 300;

function verified(rawBody: Buffer, header: string | undefined, nowSeconds: number): boolean {
  if (!header) return false;
  let timestamp = '';
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const [key, value] = item.split('=', 2);
    if (key === 't' && value) timestamp = value;
    if (key === 'v1' && value && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest();
  return signatures.some((signature) => timingSafeEqual(signature, expected));
}

const app = new Hono();
app.post('/webhooks/stripe', async (c) => {
  const rawBody = Buffer.from(await c.req.arrayBuffer());
  if (!verified(rawBody, c.req.header('stripe-signature'), Math.floor(Date.now() / 1000))) {
    return c.json({ error: { code: 'signature_mismatch' } }, 401);
  }
  let event: { id?: unknown };
  try {
    event = JSON.parse(rawBody.toString('utf8')) as { id?: unknown };
  } catch {
    return c.json({ error: { code: 'malformed_payload' } }, 400);
  }
  if (typeof event.id !== 'string') return c.json({ error: { code: 'malformed_payload' } }, 400);
  return c.json({ received: true }, 200);
});
app.get('/readyz', (c) => c.json({ status: 'ready' }));

serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' });
// A clean exit on SIGTERM, so `--cpu-prof` (BENCH_PROFILE=1) gets to write its profile.
process.on('SIGTERM', () => process.exit(0));
