import type { PgBoss } from 'pg-boss';
import type postgres from 'postgres';
import type { StatementRunner } from '../db/client.ts';
import { StorageUnavailableError, describeError } from '../errors.ts';
import { enqueueWebhookJobs } from '../queue/enqueue.ts';
import type { ConflictRecorder } from './conflicting-duplicates.ts';
import { type IncomingEvent, type InsertedEvent, eventKey, insertEventsIfAbsent } from './insert-events.ts';

/** conflicting_duplicate: a duplicate that says something else; `inboxId` is the stored event it contradicts. */
export type IngestOutcome = { kind: 'accepted'; inboxId: number } | { kind: 'duplicate' } | { kind: 'conflicting_duplicate'; inboxId: number };

export interface Ingestor {
  /** Resolves only after the event's transaction has COMMITTED; rejects with StorageUnavailableError otherwise. */
  ingest(event: IncomingEvent): Promise<IngestOutcome>;
}

export interface GroupCommitOptions {
  /** The postgres.js pool: both statements run on the driver as prepared statements (see insert-events.ts). */
  sql: postgres.Sql;
  boss: PgBoss;
  /** Records the batch's duplicates that contradict their stored event (conflicting-duplicates.ts). */
  conflicts: ConflictRecorder;
  /** Most events one transaction carries. */
  maxBatchSize: number;
  /** Transactions in flight at once; keep below the pool size so other queries still get a connection. */
  maxConcurrentBatches: number;
  /** A delivery still uncommitted after this long gets 503 (its batch may still commit: then the resend is a duplicate). */
  commitDeadlineMs: number;
}

/**
 * Transactions in flight at once, whatever the pool size. Fewer, larger transactions win: each
 * costs round trips, a COMMIT and an fsync whatever it carries, several milliseconds of CPU between
 * the service and PostgreSQL, so the more deliveries share one the less each pays. Measured with
 * `npm run bench` on 2 cores, alternating runs: 8 → 2 raised deliveries/s by ~50% at 16 and 64
 * connections; once the batch's two statements were prepared, 2 → 1 grew batches at 64 connections
 * from ~14 to ~32 events and cut CPU per delivery (service + PostgreSQL) by ~30%, for ~20% more
 * deliveries/s; at 16 connections a delivery waits a little longer for the batch ahead (8–24% fewer
 * deliveries/s there in those runs).
 */
export const DEFAULT_CONCURRENT_BATCHES = 1;

interface Waiter {
  event: IncomingEvent;
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit: deliveries that arrive while transactions are in flight share the next one (one
 * multi-row INSERT, one multi-job pg-boss insert, one COMMIT, one fsync). A delivery that finds a
 * free slot commits at once, so an idle server adds no latency; under load the batches grow and
 * the fsync cost is shared. A failed batch fails only its own deliveries.
 */
export function createGroupCommitIngestor(options: GroupCommitOptions): Ingestor {
  const queue: Waiter[] = [];
  let inFlight = 0;

  async function commitBatch(batch: Waiter[]): Promise<void> {
    // Duplicates inside one batch: the first is stored, the rest are duplicates of it (and are
    // compared with it like any duplicate).
    const firstByKey = new Map<string, Waiter>();
    for (const waiter of batch) {
      const key = eventKey(waiter.event.provider, waiter.event.event.eventId);
      if (!firstByKey.has(key)) firstByKey.set(key, waiter);
    }
    const { inserted, conflicting } = await options.sql.begin(async (tx) => {
      const rows = await insertEventsIfAbsent(tx, [...firstByKey.values()].map((w) => w.event));
      await enqueueWebhookJobs(options.boss, tx, rows);
      return { inserted: rows, conflicting: await recordConflictingDuplicates(options.conflicts, tx, batch, firstByKey, rows) };
    });
    const newIds = new Map(inserted.map((row) => [eventKey(row.provider, row.eventId), row.id]));
    for (const waiter of batch) {
      const key = eventKey(waiter.event.provider, waiter.event.event.eventId);
      const id = newIds.get(key);
      if (id !== undefined && firstByKey.get(key) === waiter) waiter.resolve({ kind: 'accepted', inboxId: id });
      else waiter.resolve(conflicting.get(waiter) ?? { kind: 'duplicate' });
    }
  }

  function flush(): void {
    while (inFlight < options.maxConcurrentBatches && queue.length > 0) {
      const batch = queue.splice(0, options.maxBatchSize);
      inFlight += 1;
      commitBatch(batch)
        .catch((error: unknown) => {
          const failure = new StorageUnavailableError(`The event could not be stored: ${describeError(error)}`, { cause: error });
          for (const waiter of batch) waiter.reject(failure);
        })
        .finally(() => {
          inFlight -= 1;
          flush();
        });
    }
  }

  return {
    ingest(event: IncomingEvent): Promise<IngestOutcome> {
      const committed = new Promise<IngestOutcome>((resolve, reject) => {
        queue.push({ event, resolve, reject });
        flush();
      });
      return withDeadline(committed, options.commitDeadlineMs);
    },
  };
}

/**
 * The batch's deliveries that stored nothing (duplicates of a stored row or of an earlier copy in
 * the batch) whose meaning contradicts the stored event: recorded, and answered as such. A batch
 * without duplicates pays nothing; one with duplicates, one statement (two if any conflicts).
 */
async function recordConflictingDuplicates(
  conflicts: ConflictRecorder,
  tx: StatementRunner,
  batch: Waiter[],
  firstByKey: Map<string, Waiter>,
  inserted: InsertedEvent[],
): Promise<Map<Waiter, IngestOutcome>> {
  const outcomes = new Map<Waiter, IngestOutcome>();
  // Every delivery stored a row: the common case costs one comparison.
  if (inserted.length === batch.length) return outcomes;
  const insertedKeys = new Set(inserted.map((row) => eventKey(row.provider, row.eventId)));
  const duplicates = batch.filter((waiter) => {
    const key = eventKey(waiter.event.provider, waiter.event.event.eventId);
    return !(insertedKeys.has(key) && firstByKey.get(key) === waiter);
  });
  if (duplicates.length === 0) return outcomes;
  const found = await conflicts.recordConflictingDuplicates(tx, duplicates.map((w) => w.event));
  found.forEach((conflict, i) => {
    if (conflict) outcomes.set(duplicates[i]!, { kind: 'conflicting_duplicate', inboxId: conflict.inboxId });
  });
  return outcomes;
}

function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StorageUnavailableError(`The database did not commit the event within ${ms} ms.`)),
      ms,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
