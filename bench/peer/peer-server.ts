/**
 * The peer on the inbox's own schema: the obvious implementation of the inbox's design, as a
 * competent team would write it from the product brief with the same stack (hono +
 * @hono/node-server, drizzle over postgres.js, pg-boss 12 with its documented `fromDrizzle`
 * adapter), writing the tables the inbox writes. Per request: the baseline's Stripe check on the
 * raw body and JSON.parse (bench/peer/peer-common.ts), then ONE transaction — INSERT … ON CONFLICT
 * (provider, event_id) DO NOTHING RETURNING into webhook_event_keys, then INSERT … RETURNING id into
 * webhook_inbox (partitioned by month, with the raw body), pg-boss `send` with singletonKey = the
 * charge id on the same transaction — COMMIT, then 200. Same tables (the inbox's own migrations,
 * applied by the bench), same queue settings, same pool size as the inbox's receiver.
 * bench/peer/seed-peer-server.ts is the same code on the seed's one lighter table.
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
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { fromDrizzle } from 'pg-boss';
import postgres from 'postgres';
import { webhookEventKeys, webhookInbox } from '../../src/db/schema.ts';
import { QUEUE, type StripeEvent, chargeIdOf, servePeer, startPeerBoss } from './peer-common.ts';

const databaseUrl = process.env.DATABASE_URL ?? '';
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

const db = drizzle(postgres(databaseUrl, { max: poolSize, onnotice: () => {} }));
const boss = await startPeerBoss(databaseUrl, poolSize);

/** Stores the event and its job in one transaction; false when the event was already stored. */
async function storeEvent(event: StripeEvent, rawBody: Buffer): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The dedupe key first: the partitioned inbox has no unique index on (provider, event_id).
    const [key] = await tx
      .insert(webhookEventKeys)
      .values({ provider: 'stripe', eventId: event.id })
      .onConflictDoNothing()
      .returning({ eventId: webhookEventKeys.eventId });
    if (!key) return false;
    const [row] = await tx
      .insert(webhookInbox)
      .values({
        provider: 'stripe',
        eventId: event.id,
        eventType: event.type,
        resourceId: chargeIdOf(event),
        payload: event,
        rawBody,
        occurredAt: new Date(event.created * 1000),
      })
      .returning({ id: webhookInbox.id });
    if (!row) throw new Error(`the inbox stored no row for event ${event.id}`);
    const jobId = await boss.send(QUEUE, { inboxId: row.id }, { singletonKey: chargeIdOf(event), db: fromDrizzle(tx, sql) });
    // pg-boss answers null (without throwing) when it refuses a job: never commit a row without one.
    if (!jobId) throw new Error(`pg-boss refused the job of event ${event.id}`);
    return true;
  });
}

servePeer(process.env.WEBHOOK_SECRET_STRIPE ?? '', storeEvent);
