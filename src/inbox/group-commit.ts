import type postgres from 'postgres';
import { type SqlExecutor, postgresExecutor } from '../db/client.ts';
import { classifyDatabaseError } from '../db/database-errors.ts';
import { EventUnstorableError, StorageUnavailableError } from '../errors.ts';
import type { EmbeddedJobInsert } from '../queue/embedded-job-insert.ts';
import type { ConflictRecorder, ConflictingDuplicate } from './conflicting-duplicates.ts';
import { type EventRow, toEventRow } from './event-row.ts';
import { type CommitLinger, NO_COMMIT_LINGER } from './commit-linger.ts';
import { type IncomingEvent, eventKey } from './incoming-event.ts';
import type { IngestPressureMeter } from './ingest-pressure.ts';
import { storeNewEvents } from './sql/store-events.ts';

/** conflicting_duplicate: a duplicate that says something else; `inboxId` is the stored event it contradicts. */
export type IngestOutcome = { kind: 'accepted'; inboxId: number } | { kind: 'duplicate' } | { kind: 'conflicting_duplicate'; inboxId: number };

export interface Ingestor {
  /**
   * Resolves only after the event's transaction has COMMITTED. Rejects with EventUnstorableError
   * (400) when the event itself cannot be stored, StorageUnavailableError (503) otherwise.
   */
  ingest(event: IncomingEvent): Promise<IngestOutcome>;
}

export interface GroupCommitOptions {
  /** The postgres.js pool: a batch is one prepared statement that commits on its own (see sql/store-events.ts). */
  sql: postgres.Sql;
  /** pg-boss's job insert for the webhooks queue, run inside that statement. */
  jobs: EmbeddedJobInsert;
  /** Records the batch's duplicates that contradict their stored event (conflicting-duplicates.ts). */
  conflicts: ConflictRecorder;
  /** Most events one transaction carries. */
  maxBatchSize: number;
  /** Batches in flight at once; keep below the pool size so other queries still get a connection. */
  maxConcurrentBatches: number;
  /** A request still uncommitted after this long gets 503 (its batch may still commit: then the resend is a duplicate). */
  commitDeadlineMs: number;
  /** Told of every queued request and committed batch, so the workers of an `all` process can give way (ingest-pressure.ts). */
  pressure?: IngestPressureMeter;
  /** Whether a request that finds the slot free waits a moment for company (commit-linger.ts); never by default. */
  linger?: CommitLinger;
}

/**
 * Batches in flight at once, whatever the pool size. Fewer, larger batches win: each costs a
 * statement, a commit and an fsync whatever it carries, milliseconds of CPU between the service
 * and PostgreSQL, so the more requests share one the less each pays
 * (docs/decisions/001-group-commit-transactions-in-flight.md).
 */
export const DEFAULT_CONCURRENT_BATCHES = 1;

interface Waiter {
  /** The request as received: a duplicate's meaning is compared with the stored event's. */
  event: IncomingEvent;
  /** Serialised at ingest(), outside the transaction (see event-row.ts). */
  row: EventRow;
  /** performance.now() when it was queued: a committed batch's wait is its oldest request's. */
  queuedAt: number;
  /** Answered already: committed, refused, or past the commit deadline. */
  settled: boolean;
  resolve(outcome: IngestOutcome): void;
  reject(error: unknown): void;
}

/**
 * Group commit: requests that arrive while a batch is in flight share the next one: one
 * statement that stores the events, claims their keys and queues their jobs, and commits on its
 * own (one round trip, one fsync; sql/store-events.ts). Under load the batches grow and the fsync
 * cost is shared; a request that finds the slot free commits at once, or, while steady traffic
 * makes it pay, waits a few milliseconds for company first (commit-linger.ts).
 *
 * One request never fails another. What an event holds is checked before it joins a batch (the
 * gate in normalized-event.ts, toEventRow); if a batch still fails for anything but the
 * database's availability, it is split in halves, each committed on its own, down to the guilty
 * requests: every other request commits and gets its 200. Halves run one after the other in
 * the batch's own slot, so the number of transactions in flight never grows.
 */
export function createGroupCommitIngestor(options: GroupCommitOptions): Ingestor {
  const queue: Waiter[] = [];
  let inFlight = 0;
  const pool = postgresExecutor(options.sql);
  const linger = options.linger ?? NO_COMMIT_LINGER;
  /** Set while the queue's oldest request waits for company; its firing starts the batch. */
  let lingering: { timer: NodeJS.Timeout; queuedWhenBegan: number } | undefined;

  async function commitOnce(batch: Waiter[]): Promise<void> {
    // Duplicates inside one batch: the first is stored, the rest are duplicates of it (and are
    // compared with it like any duplicate).
    const firstByKey = new Map<string, Waiter>();
    for (const waiter of batch) {
      const key = eventKey(waiter.row.provider, waiter.row.eventId);
      if (!firstByKey.has(key)) firstByKey.set(key, waiter);
    }
    const inserted = await storeNewEvents(
      pool,
      options.jobs,
      [...firstByKey.values()].map((w) => w.row),
    );
    options.pressure?.batchCommitted(performance.now() - batch[0]!.queuedAt, inserted.length);
    const newIds = new Map(inserted.map((row) => [eventKey(row.provider, row.eventId), row.id]));
    const duplicates: Waiter[] = [];
    for (const waiter of batch) {
      const key = eventKey(waiter.row.provider, waiter.row.eventId);
      const id = newIds.get(key);
      if (id !== undefined && firstByKey.get(key) === waiter) waiter.resolve({ kind: 'accepted', inboxId: id });
      else duplicates.push(waiter);
    }
    if (duplicates.length > 0) await answerDuplicates(options.conflicts, pool, duplicates);
  }

  /**
   * A database outage fails the whole batch (503) at once: splitting it would only knock on a
   * closed door 2n times. Otherwise the batch is split until the failure has one request to
   * blame: a data error refuses it (400, resending cannot help); an error of no known class
   * answers it 503 (it may pass later). Requests already past their deadline are left out.
   */
  async function commitBatch(batch: Waiter[]): Promise<void> {
    try {
      await commitOnce(batch);
    } catch (error) {
      const failure = classifyDatabaseError(error);
      if (failure === 'availability' || batch.length === 1) {
        const answer = failure === 'data' ? new EventUnstorableError({ cause: error }) : new StorageUnavailableError(undefined, { cause: error });
        for (const waiter of batch) waiter.reject(answer);
        return;
      }
      const middle = Math.ceil(batch.length / 2);
      for (const half of [batch.slice(0, middle), batch.slice(middle)]) {
        const waiting = half.filter((w) => !w.settled);
        if (waiting.length > 0) await commitBatch(waiting);
      }
    }
  }

  function endLinger(): void {
    if (!lingering) return;
    clearTimeout(lingering.timer);
    linger.ended(lingering.queuedWhenBegan, Math.min(queue.length, options.maxBatchSize));
    lingering = undefined;
  }

  function lingerFor(ms: number): void {
    const timer = setTimeout(() => {
      // Nothing leaves the queue while a wait is on (it starts only with no batch in flight).
      const more = linger.extend(queue[0]!.queuedAt, queue.length);
      if (more > 0) return lingerFor(more);
      endLinger();
      startBatches();
    }, ms);
    if (lingering) lingering.timer = timer;
    else lingering = { timer, queuedWhenBegan: queue.length };
  }

  function flush(): void {
    if (lingering) {
      if (linger.extend(queue[0]!.queuedAt, queue.length) > 0) return;
      endLinger();
    } else if (inFlight === 0 && queue.length > 0) {
      const wait = linger.begin(queue[0]!.queuedAt, queue.length);
      if (wait > 0) {
        lingerFor(wait);
        return;
      }
    }
    startBatches();
  }

  function startBatches(): void {
    while (inFlight < options.maxConcurrentBatches && queue.length > 0) {
      const batch = queue.splice(0, options.maxBatchSize);
      inFlight += 1;
      commitBatch(batch)
        // Unreachable unless a resolve/reject throws; never leave a request unanswered.
        .catch((error: unknown) => {
          for (const waiter of batch) waiter.reject(new StorageUnavailableError(undefined, { cause: error }));
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
      return new Promise<IngestOutcome>((resolve, reject) => {
        // Past the deadline the request gets 503; its batch may still commit (then the resend is a duplicate).
        const timer = setTimeout(
          () => waiter.reject(new StorageUnavailableError(`The database did not commit the event within ${options.commitDeadlineMs} ms; send it again.`)),
          options.commitDeadlineMs,
        );
        const settle = (answer: () => void) => {
          if (waiter.settled) return;
          waiter.settled = true;
          clearTimeout(timer);
          answer();
        };
        const waiter: Waiter = {
          event,
          row,
          queuedAt: performance.now(),
          settled: false,
          resolve: (outcome) => settle(() => resolve(outcome)),
          reject: (error) => settle(() => reject(error)),
        };
        queue.push(waiter);
        linger.arrived();
        options.pressure?.requestQueued(queue.length);
        flush();
      });
    },
  };
}

/**
 * The batch's requests that stored nothing (duplicates of a stored row or of an earlier copy in
 * the batch): each one whose meaning contradicts the stored event is recorded and answered as
 * such, the rest as ordinary duplicates. After the batch's statement committed, before any of
 * them is answered: a crash in between leaves them unanswered, so the gateway sends them again
 * and they are compared again. If recording fails they get 503 for the same reason (the batch's
 * new events are stored and answered already: never failed with them).
 */
async function answerDuplicates(conflicts: ConflictRecorder, pool: SqlExecutor, duplicates: Waiter[]): Promise<void> {
  let found: (ConflictingDuplicate | undefined)[];
  try {
    found = await conflicts.recordConflictingDuplicates(
      pool,
      duplicates.map((w) => w.event),
    );
  } catch (error) {
    const answer = new StorageUnavailableError('The duplicate could not be compared with the stored event; send it again.', { cause: error });
    for (const waiter of duplicates) waiter.reject(answer);
    return;
  }
  duplicates.forEach((waiter, i) => {
    const conflict = found[i];
    waiter.resolve(conflict ? { kind: 'conflicting_duplicate', inboxId: conflict.inboxId } : { kind: 'duplicate' });
  });
}
