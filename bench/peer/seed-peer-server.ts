/**
 * The seed-style peer: the receiver as the product brief's first step describes a straightforward
 * implementation of it, on the seed's one table (bench/peer/seed-table.ts: unique (provider,
 * event_id), a jsonb payload, no partitions, no separate keys, no raw body). Per request: the
 * baseline's Stripe check on the raw body and JSON.parse (bench/peer/peer-common.ts), then ONE
 * transaction — INSERT … ON CONFLICT (provider, event_id) DO NOTHING RETURNING id, and only for a
 * new row pg-boss `send` with singletonKey = the charge id on the same transaction (`fromDrizzle`)
 * — COMMIT, then 200. The same stack, queue settings and pool sizes as the peer on the inbox's own
 * schema (bench/peer/peer-server.ts), so the two differ only in what they write.
 *
 * Like that peer it has no group commit and no prepared statements, and writes no log line per
 * delivery. Run by bench/support/services.ts as a child process, after it created the table:
 * `PORT=… DATABASE_URL=… WEBHOOK_SECRET_STRIPE=… [DATABASE_POOL_SIZE=10] node bench/peer/seed-peer-server.ts`.
 */
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import { fromDrizzle } from 'pg-boss';
import postgres from 'postgres';
import { QUEUE, type StripeEvent, chargeIdOf, servePeer, startPeerBoss } from './peer-common.ts';
import { seedInbox } from './seed-table.ts';

const databaseUrl = process.env.DATABASE_URL ?? '';
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

const db = drizzle(postgres(databaseUrl, { max: poolSize, onnotice: () => {} }));
const boss = await startPeerBoss(databaseUrl, poolSize);

/** Stores the event and its job in one transaction; false when the event was already stored. */
async function storeEvent(event: StripeEvent): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(seedInbox)
      .values({
        provider: 'stripe',
        eventId: event.id,
        eventType: event.type,
        resourceId: chargeIdOf(event),
        payload: event,
        occurredAt: new Date(event.created * 1000),
      })
      .onConflictDoNothing({ target: [seedInbox.provider, seedInbox.eventId] })
      .returning({ id: seedInbox.id });
    if (!row) return false;
    const jobId = await boss.send(QUEUE, { inboxId: row.id }, { singletonKey: chargeIdOf(event), db: fromDrizzle(tx, sql) });
    // pg-boss answers null (without throwing) when it refuses a job: never commit a row without one.
    if (!jobId) throw new Error(`pg-boss refused the job of event ${event.id}`);
    return true;
  });
}

servePeer(process.env.WEBHOOK_SECRET_STRIPE ?? '', storeEvent);
