import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../db/client.ts';
import { webhookInbox } from '../db/schema.ts';
import { type ArchivedEvent, readArchive } from './archive.ts';

export interface RestoreOptions {
  /** Count what would be inserted; write nothing. */
  dryRun?: boolean;
  /** Rows per INSERT. Default 500. */
  batchSize?: number;
}

export interface RestoreResult {
  file: string;
  dryRun: boolean;
  /** Lines read from the archive. */
  read: number;
  /** Rows inserted (on a dry run: rows that would be). */
  inserted: number;
  /** Rows already in the inbox (same id or same provider + event id), left as they are. */
  skipped: number;
}

/** One multi-row INSERT … ON CONFLICT DO NOTHING: any unique key (id, or provider + event id) that exists wins. */
export async function insertArchivedEventsIfAbsent(db: Executor, events: ArchivedEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const inserted = await db
    .insert(webhookInbox)
    .values(
      events.map((e) => ({
        id: e.id,
        provider: e.provider,
        eventId: e.event_id,
        eventType: e.event_type,
        resourceId: e.resource_id,
        status: e.status,
        attempts: e.attempts,
        lastError: e.last_error,
        occurredAt: sql`${e.occurred_at}::timestamptz`,
        receivedAt: sql`${e.received_at}::timestamptz`,
        processedAt: e.processed_at === null ? null : sql`${e.processed_at}::timestamptz`,
        payload: sql`${e.payload_json}::text::jsonb`,
        payloadLossy: e.payload_lossy ?? false,
        rawBody: Buffer.from(e.raw_body_base64, 'base64'),
        fact: e.fact_json == null ? null : sql`${e.fact_json}::text::jsonb`,
        fingerprint: e.fingerprint ?? null,
      })),
    )
    .onConflictDoNothing()
    .returning({ id: webhookInbox.id });
  return inserted.length;
}

/** How many of these events the inbox already has (by id or by provider + event id). */
export async function countExistingEvents(db: Executor, events: ArchivedEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const ids = events.map((e) => e.id);
  const byId = await db.select({ id: webhookInbox.id, provider: webhookInbox.provider, eventId: webhookInbox.eventId }).from(webhookInbox).where(inArray(webhookInbox.id, ids));
  const byKey = await db
    .select({ id: webhookInbox.id, provider: webhookInbox.provider, eventId: webhookInbox.eventId })
    .from(webhookInbox)
    .where(and(eq(webhookInbox.provider, events[0]!.provider), inArray(webhookInbox.eventId, events.map((e) => e.event_id))));
  const present = new Set([...byId, ...byKey].map((r) => `${r.provider}\u0000${r.eventId}`));
  const presentIds = new Set(byId.map((r) => r.id));
  return events.filter((e) => presentIds.has(e.id) || present.has(`${e.provider}\u0000${e.event_id}`)).length;
}

/**
 * Restored ids are the originals; if the archive is restored into a database whose id sequence
 * is behind them (a fresh one), the sequence is moved past them so new deliveries cannot collide.
 */
export async function advanceIdSequencePast(db: Database): Promise<void> {
  await db.execute(sql`
    select setval(pg_get_serial_sequence('webhook_inbox', 'id'), max_id)
    from (select max(id) as max_id from webhook_inbox) m
    where max_id > (select last_value from webhook_inbox_id_seq)`);
}

/**
 * Reads an archive back into the inbox with its original ids, statuses and exact bytes. Rows that
 * exist are skipped, so restoring a file twice, or a file whose rows were never deleted, is safe.
 */
export async function restoreArchive(db: Database, file: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const result: RestoreResult = { file, dryRun: options.dryRun === true, read: 0, inserted: 0, skipped: 0 };
  const batchSize = options.batchSize ?? 500;
  let batch: ArchivedEvent[] = [];
  const flush = async () => {
    const existing = result.dryRun ? await countExistingEvents(db, batch) : batch.length - (await insertArchivedEventsIfAbsent(db, batch));
    result.inserted += batch.length - existing;
    result.skipped += existing;
    batch = [];
  };
  for await (const event of readArchive(file)) {
    result.read += 1;
    // One provider per batch keeps the existence check on the (provider, event_id) index.
    if (batch.length >= batchSize || (batch.length > 0 && batch[0]!.provider !== event.provider)) await flush();
    batch.push(event);
  }
  if (batch.length > 0) await flush();
  if (!result.dryRun && result.inserted > 0) await advanceIdSequencePast(db);
  return result;
}
