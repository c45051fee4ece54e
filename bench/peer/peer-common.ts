/**
 * What both peers share (bench/peer/peer-server.ts on the inbox's own schema, and
 * bench/peer/seed-peer-server.ts on the seed's one table): the request work, the queue and the
 * HTTP face. Shared so that the two differ only in what they write, and each differs from the
 * baseline only in the database.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { PgBoss } from 'pg-boss';
import { stripeSignatureIsValid } from '../support/stripe-verify.ts';

export const QUEUE = 'webhooks';

export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

function parseStripeEvent(rawBody: Buffer): StripeEvent | null {
  try {
    const event = JSON.parse(rawBody.toString('utf8')) as Partial<StripeEvent> | null;
    const object = event?.data?.object;
    if (typeof event?.id !== 'string' || typeof event.type !== 'string' || !Number.isInteger(event.created) || typeof object !== 'object' || object === null)
      return null;
    return event as StripeEvent;
  } catch {
    return null;
  }
}

/** A dispute's own id is dp_…; the charge it belongs to is what orders its processing. */
export function chargeIdOf(event: StripeEvent): string {
  const id = event.type.startsWith('charge.dispute.') ? event.data.object.charge : event.data.object.id;
  return typeof id === 'string' ? id : event.id;
}

/**
 * pg-boss as an API node (no maintenance, no cron, no workers: pg-boss's docs), with the inbox's
 * queue settings; its pool only reads queue settings. The inbox's defaults size the pools:
 * DATABASE_POOL_SIZE 10 for the app, max(4, half of it) for pg-boss.
 */
export async function startPeerBoss(databaseUrl: string, poolSize: number): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: databaseUrl, max: Math.max(4, Math.ceil(poolSize / 2)), supervise: false, schedule: false });
  boss.on('error', (error) => console.error('pg-boss', error));
  await boss.start();
  await boss.createQueue(`${QUEUE}-dead-letter`);
  await boss.createQueue(QUEUE, {
    policy: 'singleton',
    retryLimit: 9,
    retryDelay: 10,
    retryBackoff: true,
    retryDelayMax: 900,
    expireInSeconds: 300,
    retentionSeconds: 30 * 24 * 3600,
    deleteAfterSeconds: 7 * 24 * 3600,
    deadLetter: `${QUEUE}-dead-letter`,
    // Workers of this design wake on the job's NOTIFY rather than wait for their next poll.
    notify: true,
  });
  return boss;
}

/**
 * `POST /webhooks/stripe`: the baseline's Stripe check on the raw body and JSON.parse, then
 * `storeEvent` (one transaction, COMMIT), then 200. A duplicate commits nothing new and still gets
 * 200; a failed transaction gets 500 and the gateway retries.
 */
export function servePeer(secret: string, storeEvent: (event: StripeEvent, rawBody: Buffer) => Promise<unknown>): void {
  const app = new Hono();
  app.post('/webhooks/stripe', async (c) => {
    const rawBody = Buffer.from(await c.req.arrayBuffer());
    if (!stripeSignatureIsValid(rawBody, c.req.header('stripe-signature'), secret, Math.floor(Date.now() / 1000))) {
      return c.json({ error: { code: 'signature_mismatch' } }, 401);
    }
    const event = parseStripeEvent(rawBody);
    if (!event) return c.json({ error: { code: 'malformed_payload' } }, 400);
    try {
      await storeEvent(event, rawBody);
    } catch (error) {
      console.error(`storing ${event.id} failed`, error);
      return c.json({ error: { code: 'store_failed' } }, 500);
    }
    return c.json({ received: true }, 200);
  });
  app.get('/readyz', (c) => c.json({ status: 'ready' }));
  serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 0), hostname: '127.0.0.1' });
  // A clean exit on SIGTERM, so `--cpu-prof` (BENCH_PROFILE=1) gets to write its profile.
  process.on('SIGTERM', () => process.exit(0));
}
