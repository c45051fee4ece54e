/**
 * The peer: the obvious implementation of the inbox's design, as a competent team would write it
 * from the product brief with the same stack (hono + @hono/node-server, drizzle over postgres.js,
 * pg-boss 12 with its documented `fromDrizzle` adapter). Per request: the baseline's Stripe check
 * on the raw body and JSON.parse (bench/support/stripe-verify.ts, shared so the two differ only in
 * the database), then ONE transaction — INSERT … ON CONFLICT (provider, event_id) DO NOTHING
 * RETURNING into webhook_event_keys, then INSERT … RETURNING id into webhook_inbox, pg-boss `send` with singletonKey = the charge id on the same
 * transaction — COMMIT, then 200. A duplicate commits nothing new and still gets 200; a failed
 * transaction gets 500 and the gateway retries. Same table (the inbox's own migrations, applied by
 * the bench), same queue settings, same pool size as the inbox's receiver.
 *
 * What it deliberately does NOT do, because the inbox does them and they are the inbox's design
 * choices, not things a team writing from the brief would reach for:
 * - group commit: each delivery here pays its own BEGIN, two statements, COMMIT and WAL flush;
 *   the inbox shares one transaction (and one fsync) among all deliveries that arrive meanwhile;
 * - prepared statements: drizzle's query builder and `fromDrizzle` send each statement unprepared
 *   (parse and plan every time), as they do by default; the inbox prepares its two.
 * And one thing it leaves out in its own favour: no log line per delivery (the inbox writes one).
 *
 * Run by bench/support/services.ts as a child process:
 * `PORT=… DATABASE_URL=… WEBHOOK_SECRET_STRIPE=… [DATABASE_POOL_SIZE=10] node bench/peer/peer-server.ts`.
 */
import { serve } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { Hono } from 'hono';
import { PgBoss, fromDrizzle } from 'pg-boss';
import postgres from 'postgres';
import { webhookEventKeys, webhookInbox } from '../../src/db/schema.ts';
import { stripeSignatureIsValid } from '../support/stripe-verify.ts';

const secret = process.env.WEBHOOK_SECRET_STRIPE ?? '';
const databaseUrl = process.env.DATABASE_URL ?? '';
// The inbox's defaults: DATABASE_POOL_SIZE 10 for the app, max(4, half of it) for pg-boss's own pool.
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);
const QUEUE = 'webhooks';

interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

function parseStripeEvent(rawBody: Buffer): StripeEvent | null {
  try {
    const event = JSON.parse(rawBody.toString('utf8')) as Partial<StripeEvent> | null;
    const object = event?.data?.object;
    if (typeof event?.id !== 'string' || typeof event.type !== 'string' || !Number.isInteger(event.created) || typeof object !== 'object' || object === null) return null;
    return event as StripeEvent;
  } catch {
    return null;
  }
}

// A dispute's own id is dp_…; the charge it belongs to is what orders its processing.
function chargeIdOf(event: StripeEvent): string {
  const id = event.type.startsWith('charge.dispute.') ? event.data.object.charge : event.data.object.id;
  return typeof id === 'string' ? id : event.id;
}

const client = postgres(databaseUrl, { max: poolSize, onnotice: () => {} });
const db = drizzle(client);
// An API node: no maintenance, no cron, no workers (pg-boss's docs); its pool only reads queue settings.
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

/** Stores the event and its job in one transaction; false when the event was already stored. */
async function storeEvent(event: StripeEvent, rawBody: Buffer): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The dedupe key first: the partitioned inbox has no unique index on (provider, event_id).
    const [key] = await tx.insert(webhookEventKeys).values({ provider: 'stripe', eventId: event.id }).onConflictDoNothing().returning({ eventId: webhookEventKeys.eventId });
    if (!key) return false;
    const [row] = await tx
      .insert(webhookInbox)
      .values({ provider: 'stripe', eventId: event.id, eventType: event.type, resourceId: chargeIdOf(event), payload: event, rawBody, occurredAt: new Date(event.created * 1000) })
      .returning({ id: webhookInbox.id });
    if (!row) throw new Error(`the inbox stored no row for event ${event.id}`);
    const jobId = await boss.send(QUEUE, { inboxId: row.id }, { singletonKey: chargeIdOf(event), db: fromDrizzle(tx, sql) });
    // pg-boss answers null (without throwing) when it refuses a job: never commit a row without one.
    if (!jobId) throw new Error(`pg-boss refused the job of event ${event.id}`);
    return true;
  });
}

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
