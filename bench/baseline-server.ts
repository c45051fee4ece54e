/**
 * The baseline: a bare Hono server on the same Node, doing the request work every receiver must do
 * — read the raw body, check the Stripe HMAC (and its timestamp), parse the JSON — and nothing
 * else: no database, no logging. Whatever the inbox does beyond this is the price of durability.
 * Run by bench/run.ts as a child process: `PORT=… WEBHOOK_SECRET_STRIPE=… node bench/baseline-server.ts`.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { stripeSignatureIsValid } from './support/stripe-verify.ts';

const secret = process.env.WEBHOOK_SECRET_STRIPE ?? '';

const app = new Hono();
app.post('/webhooks/stripe', async (c) => {
  const rawBody = Buffer.from(await c.req.arrayBuffer());
  if (!stripeSignatureIsValid(rawBody, c.req.header('stripe-signature'), secret, Math.floor(Date.now() / 1000))) {
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
