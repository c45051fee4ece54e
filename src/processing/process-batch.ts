import { type Database, drizzleExecutor } from '../db/client.ts';
import type { SettledStatus } from '../db/schema.ts';
import { describeError } from '../errors.ts';
import { errorClassOf } from './error-class.ts';
import type { ProcessingMetrics } from './metrics.ts';
import { retryNotBefore } from '../refetch/errors.ts';
import { rejectedMoneyMovement } from '../domain/payments/event-decision.ts';
import { PaymentNotYetKnown } from '../domain/payments/errors.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import type { InboxEventRow } from '../inbox/sql/event-columns.ts';
import { findEventsByIds } from '../inbox/sql/find-events.ts';
import { recordFailedAttempt } from '../inbox/sql/mark-events.ts';
import { type Applied, type ReadyEvent, applyInBatchThenAlone } from './apply-batch.ts';
import { type HandlerRegistry, routeEvent } from './handlers.ts';

export interface ProcessingDeps {
  db: Database;
  providers: ReadonlyMap<string, ConfiguredProvider>;
  handlers: HandlerRegistry;
  /** Attempts, failures by error class, received → processed latency (processing/metrics.ts). */
  metrics?: ProcessingMetrics;
  /**
   * Queues the event again to start at `startAfter`, leaving its row pending with `reason`; the
   * new job gets `retriesLeft` retries when the job said how many it had left (EventJob).
   * Without it a gateway breaker that is open, or a gateway's Retry-After, fails the attempt like
   * any other error.
   */
  deferEvent?(inboxId: number, startAfter: Date, reason: string, retriesLeft: number | undefined): Promise<void>;
}

/**
 * `skipped`: the row is gone or no longer pending; another job (or this job's earlier attempt)
 * handled it. `deferred`: the gateway may not be called yet (its circuit breaker is open, or it
 * answered with Retry-After); a new job starts when it may.
 */
export type JobOutcome = SettledStatus | 'skipped' | 'deferred';

/** One job's result: its outcome, or the error its attempt failed with (pg-boss retries it). */
export type EventResult = { outcome: JobOutcome } | { error: unknown };

export interface EventJob {
  inboxId: number;
  /** When the row was received, if the job says: its statements then search only that month's partition. */
  receivedAt?: Date | undefined;
  /** pg-boss aborts it when the job expired or shutdown gave up on it: nothing new starts then. */
  signal?: AbortSignal;
  /**
   * The retries pg-boss still has for this job after this attempt (retryLimit − retryCount). An
   * attempt deferred for an open breaker or a Retry-After is not spent, so the job queued in its
   * place gets exactly these: WORKER_MAX_ATTEMPTS still bounds the event's attempts in all.
   */
  retriesLeft?: number;
}

const MAX_ERROR_LENGTH = 2000;

/**
 * One fetched batch of jobs, one stored event each, from the jobs to the COMMIT. Where a reader
 * of processing starts; each step is a function of its own, called from here in this order:
 *
 * 1. readJobRows: the jobs' rows, one statement, outside any transaction.
 * 2. prepareJob, per job, concurrently: a row gone or no longer pending is `skipped`; the others
 *    are routed by canonical kind, and their handler's `prepare` does its slow I/O (the payments
 *    handler re-reads the charge from the gateway): no lock is held across a network call.
 * 3. applyInBatchThenAlone, per wave of prepared events (inWaves): ONE transaction for the wave
 *    (apply-batch.ts, applyBatch: lock the rows, keep those still pending, each handler applies
 *    its events — payments-handler.ts, applyPaymentBatch, for payments —, mark the outcomes,
 *    COMMIT); if it fails, each event again in its own, so a bad event fails only its own job.
 * 4. resultOf, per event: its outcome counted, or its failed attempt recorded (failedAttempt).
 *
 * A transaction per batch, not per event, is what makes processing fast: its statements and its
 * COMMIT are shared by every event in it. A failed attempt is recorded outside any transaction
 * (attempts + 1, the error) and returned as the job's error, so pg-boss retries it with backoff.
 * An open gateway breaker, or a gateway's Retry-After, is no failure of the event: it is queued
 * again for when it may be called, without spending an attempt (and without being applied from
 * its payload). Jobs are idempotent: the sweeper and replays re-enqueue freely.
 */
export async function processBatch(deps: ProcessingDeps, jobs: readonly EventJob[]): Promise<EventResult[]> {
  let rows: Map<number, InboxEventRow>;
  try {
    rows = await readJobRows(deps.db, jobs);
  } catch (error) {
    return Promise.all(jobs.map((job) => failedAttempt(deps, job, undefined, error)));
  }
  const results: EventResult[] = new Array(jobs.length);
  const repeats = repeatedJobs(jobs);
  // Started all at once; a job skipped or failed while preparing has its result already.
  const preparations = jobs.map(async (job, position) => {
    const prepared = await prepareJob(deps, job, position, repeats.has(position) ? undefined : rows.get(job.inboxId));
    if ('result' in prepared) results[position] = prepared.result;
    return 'ready' in prepared ? prepared.ready : undefined;
  });
  for await (const wave of inWaves(preparations)) {
    for (const [item, applied] of await applyInBatchThenAlone(deps, wave)) results[item.position] = await resultOf(deps, jobs[item.position]!, item, applied);
  }
  return results;
}

/**
 * The jobs' rows, searched in the partitions of the times the jobs carry. A row not there is
 * searched for again by id alone: a job's time is a hint (a job queued by hand may carry a wrong
 * one), and an event skipped for it would wait for the sweeper.
 */
async function readJobRows(db: Database, jobs: readonly EventJob[]): Promise<Map<number, InboxEventRow>> {
  const inbox = drizzleExecutor(db);
  const rows = await findEventsByIds(
    inbox,
    jobs.map((job) => ({ id: job.inboxId, receivedAt: job.receivedAt })),
  );
  const elsewhere = jobs.filter((job) => job.receivedAt !== undefined && !rows.has(job.inboxId));
  if (elsewhere.length > 0)
    for (const [id, row] of await findEventsByIds(
      inbox,
      elsewhere.map((job) => ({ id: job.inboxId })),
    ))
      rows.set(id, row);
  return rows;
}

/** Two jobs of one event in a batch: the first does the work, the later ones are skipped. */
function repeatedJobs(jobs: readonly EventJob[]): Set<number> {
  const seen = new Set<number>();
  const repeats = new Set<number>();
  for (const [position, job] of jobs.entries()) {
    if (seen.has(job.inboxId)) repeats.add(position);
    else seen.add(job.inboxId);
  }
  return repeats;
}

/** A job's event routed and prepared for the transaction, or its result already: skipped, or its failed attempt. */
async function prepareJob(
  deps: ProcessingDeps,
  job: EventJob,
  position: number,
  row: InboxEventRow | undefined,
): Promise<{ ready: ReadyEvent } | { result: EventResult }> {
  if (row?.status !== 'pending') return { result: { outcome: 'skipped' } };
  deps.metrics?.attempt(row.provider);
  try {
    const { event, handler } = routeEvent(deps, row);
    const context = handler?.prepare ? await handler.prepare(event, job.signal ?? new AbortController().signal) : undefined;
    job.signal?.throwIfAborted();
    return { ready: { position, row, event, context, handler } };
  } catch (error) {
    return { result: await failedAttempt(deps, job, row, error) };
  }
}

/**
 * The prepared events in waves, each in inbox id order: everything prepared by the time the
 * previous wave's transaction ends goes into the next one. Events with nothing to fetch are ready
 * at once and share the first transaction; an event waiting on a gateway (a refetch behind its
 * rate limit) never holds back the rest of the batch, only joins a later wave.
 */
async function* inWaves(preparations: Promise<ReadyEvent | undefined>[]): AsyncGenerator<ReadyEvent[]> {
  let waiting = preparations.length;
  let ready: ReadyEvent[] = [];
  let wake = () => {};
  for (const preparation of preparations) {
    void preparation.then((item) => {
      waiting -= 1;
      if (item) ready.push(item);
      wake();
    });
  }
  while (waiting > 0 || ready.length > 0) {
    if (ready.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    // Let the preparations that finish together land in the same wave.
    await new Promise((resolve) => setImmediate(resolve));
    const wave = ready.sort((a, b) => a.event.inboxId - b.event.inboxId);
    ready = [];
    if (wave.length > 0) yield wave;
  }
}

/** An applied event's job result, counted; a failed one's attempt recorded. */
async function resultOf(deps: ProcessingDeps, job: EventJob, item: ReadyEvent, applied: Applied): Promise<EventResult> {
  if ('error' in applied) return failedAttempt(deps, job, item.row, applied.error);
  if (applied.outcome !== 'skipped') deps.metrics?.settled(item.row.provider, applied.outcome, item.row.receivedAt, new Date());
  const refusedMoney = rejectedMoneyMovement(applied.decision);
  if (refusedMoney) deps.metrics?.rejectedMoneyEvent(item.row.provider, refusedMoney);
  return { outcome: applied.outcome };
}

async function failedAttempt(deps: ProcessingDeps, job: EventJob, row: InboxEventRow | undefined, error: unknown): Promise<EventResult> {
  const notBefore = retryNotBefore(error);
  if (notBefore && deps.deferEvent) {
    try {
      await deps.deferEvent(job.inboxId, notBefore, describeError(error).slice(0, MAX_ERROR_LENGTH), job.retriesLeft);
      return { outcome: 'deferred' };
    } catch (deferError) {
      error = deferError;
    }
  }
  if (row) deps.metrics?.failure(row.provider, errorClassOf(error));
  const text = describeError(error).slice(0, MAX_ERROR_LENGTH);
  // Best effort: when the database itself is what failed, this fails too and the retry still happens.
  await recordFailedAttempt(drizzleExecutor(deps.db), job.inboxId, text, unknownPaymentDecision(error)).catch(() => {});
  return { error };
}

/** The payment the application has not created yet is a decision too: the row may end failed on it (a dry run predicts the same). */
export function unknownPaymentDecision(error: unknown) {
  return error instanceof PaymentNotYetKnown ? { decision: 'unknown_payment' as const, detail: { chargeId: error.chargeId } } : undefined;
}
