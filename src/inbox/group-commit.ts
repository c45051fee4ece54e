import type { PgBoss } from 'pg-boss';
import type postgres from 'postgres';
import { StorageUnavailableError, describeError } from '../errors.ts';
import { enqueueWebhookJobs } from '../queue/enqueue.ts';
import { type EventRow, toEventRow } from './event-row.ts';
import { type IncomingEvent, eventKey, insertEventsIfAbsent } from './insert-events.ts';

export type IngestOutcome = { kind: 'accepted'; inboxId: number } | { kind: 'duplicate' };

export interface Ingestor {
  /** Resolves only after the event's transaction has COMMITTED; rejects with StorageUnavailableError otherwise. */
  ingest(event: IncomingEvent): Promise<IngestOutcome>;
}

export interface GroupCommitOptions {
  /** The postgres.js pool: both statements run on the driver as prepared statements (see insert-events.ts). */
  sql: postgres.Sql;
  boss: PgBoss;
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
  /** Serialised at ingest(), outside the transaction (see event-row.ts). */
  row: EventRow;
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
    // Duplicates inside one batch: the first stands for all, the rest are duplicates of it.
    const firstByKey = new Map<string, Waiter>();
    for (const waiter of batch) {
      const key = eventKey(waiter.row.provider, waiter.row.eventId);
      if (!firstByKey.has(key)) firstByKey.set(key, waiter);
    }
    const inserted = await options.sql.begin(async (tx) => {
      const rows = await insertEventsIfAbsent(tx, [...firstByKey.values()].map((w) => w.row));
      await enqueueWebhookJobs(options.boss, tx, rows);
      return rows;
    });
    const newIds = new Map(inserted.map((row) => [eventKey(row.provider, row.eventId), row.id]));
    for (const waiter of batch) {
      const key = eventKey(waiter.row.provider, waiter.row.eventId);
      const id = newIds.get(key);
      if (id !== undefined && firstByKey.get(key) === waiter) waiter.resolve({ kind: 'accepted', inboxId: id });
      else waiter.resolve({ kind: 'duplicate' });
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
      let row: EventRow;
      try {
        row = toEventRow(event);
      } catch (error) {
        return Promise.reject(error);
      }
      const committed = new Promise<IngestOutcome>((resolve, reject) => {
        queue.push({ row, resolve, reject });
        flush();
      });
      return withDeadline(committed, options.commitDeadlineMs);
    },
  };
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
