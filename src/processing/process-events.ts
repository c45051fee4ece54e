import { type Database, type Transaction, drizzleExecutor } from '../db/client.ts';
import type { SettledStatus } from '../db/schema.ts';
import { describeError } from '../errors.ts';
import { errorClassOf } from '../observability/error-class.ts';
import type { ProcessingMetrics } from '../observability/metrics.ts';
import { retryNotBefore } from '../refetch/errors.ts';
import { type EventDecision, rejectedMoneyMovement } from '../domain/payments/event-decision.ts';
import { PaymentNotYetKnown } from '../domain/payments/errors.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import { type AppliedEvent, type EventHandler, type HandlerRegistry, type InboxEvent, type PreparedEvent, canonicalKind, notAPaymentEvent } from './handlers.ts';
import type { InboxEventRow } from '../inbox/sql/event-columns.ts';
import { findEventsByIds } from '../inbox/sql/find-events.ts';
import { type EventOutcome, lockEventsForProcessing, markEventOutcomes, recordFailedAttempt } from '../inbox/sql/mark-events.ts';

export interface ProcessingDeps {
  db: Database;
  providers: ReadonlyMap<string, ConfiguredProvider>;
  handlers: HandlerRegistry;
  /** Attempts, failures by error class, received → processed latency (observability/metrics.ts). */
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

export class ProviderNotConfiguredError extends Error {
  readonly code = 'provider_not_configured';
  constructor(provider: string) {
    super(`No provider named "${provider}" is configured in this process, so its events cannot be read. Restore its configuration, then replay.`);
    this.name = 'ProviderNotConfiguredError';
  }
}

const MAX_ERROR_LENGTH = 2000;

/** An event routed and prepared, waiting for the batch's transaction. */
export interface ReadyEvent extends PreparedEvent {
  position: number;
  handler: EventHandler | undefined;
  row: InboxEventRow;
}

/**
 * A batch of jobs, one stored event each. Outside any transaction: read the rows (one statement),
 * route each by canonical kind, let its handler `prepare` (slow I/O, concurrently). Then ONE
 * transaction for all the events prepared (see inWaves): lock the rows; drop those no longer pending (jobs are
 * idempotent: the sweeper and replays re-enqueue freely); each handler applies its events; the
 * rows become processed/ignored with attempts + 1. A transaction per batch, not per event, is
 * what makes processing fast: its statements and its COMMIT are shared by every event in it.
 *
 * If the batch's transaction fails, each of its events is tried again alone, so a bad event fails
 * only its own job. A failed attempt is recorded outside any transaction (attempts + 1, the
 * error) and returned as the job's error, so pg-boss retries it with backoff. An open gateway
 * breaker, or a gateway's Retry-After, is no failure of the event: it is queued again for when the
 * breaker half-opens or the Retry-After has passed, without spending one of its attempts (and
 * without being applied from its payload).
 */
export async function processInboxEvents(deps: ProcessingDeps, jobs: readonly EventJob[]): Promise<EventResult[]> {
  const results: EventResult[] = new Array(jobs.length);
  let rows: Map<number, InboxEventRow>;
  try {
    rows = await readJobRows(deps.db, jobs);
  } catch (error) {
    return Promise.all(jobs.map((job) => failedAttempt(deps, job, undefined, error)));
  }
  const seen = new Set<number>();
  const preparations = jobs.map(async (job, position): Promise<ReadyEvent | undefined> => {
    const row = rows.get(job.inboxId);
    // Two jobs of one event in a batch: the first does the work.
    const repeated = seen.has(job.inboxId);
    seen.add(job.inboxId);
    if (!row || row.status !== 'pending' || repeated) {
      results[position] = { outcome: 'skipped' };
      return undefined;
    }
    deps.metrics?.attempt(row.provider);
    try {
      return { position, row, ...(await routeAndPrepare(deps, row, job.signal)) };
    } catch (error) {
      results[position] = await failedAttempt(deps, job, row, error);
      return undefined;
    }
  });
  await inWaves(preparations, async (wave) => {
    wave.sort((a, b) => a.event.inboxId - b.event.inboxId);
    for (const [item, applied] of await applyInBatchThenAlone(deps, wave)) {
      if ('error' in applied) {
        results[item.position] = await failedAttempt(deps, jobs[item.position]!, item.row, applied.error);
      } else {
        if (applied.outcome !== 'skipped') deps.metrics?.settled(item.row.provider, applied.outcome, item.row.receivedAt, new Date());
        const refusedMoney = rejectedMoneyMovement(applied.decision);
        if (refusedMoney) deps.metrics?.rejectedMoneyEvent(item.row.provider, refusedMoney);
        results[item.position] = { outcome: applied.outcome };
      }
    }
  });
  return results;
}

/**
 * The jobs' rows, searched in the partitions of the times the jobs carry. A row not there is
 * searched for again by id alone: a job's time is a hint (a job queued by hand may carry a wrong
 * one), and an event skipped for it would wait for the sweeper.
 */
async function readJobRows(db: Database, jobs: readonly EventJob[]): Promise<Map<number, InboxEventRow>> {
  const inbox = drizzleExecutor(db);
  const rows = await findEventsByIds(inbox, jobs.map((job) => ({ id: job.inboxId, receivedAt: job.receivedAt })));
  const elsewhere = jobs.filter((job) => job.receivedAt !== undefined && !rows.has(job.inboxId));
  if (elsewhere.length > 0) for (const [id, row] of await findEventsByIds(inbox, elsewhere.map((job) => ({ id: job.inboxId })))) rows.set(id, row);
  return rows;
}

/**
 * Applies prepared events in waves: everything prepared by the time the previous wave's
 * transaction ends goes into the next one. Events with nothing to fetch are ready at once and
 * share the first transaction; an event waiting on a gateway (a refetch behind its rate limit)
 * never holds back the rest of the batch, only joins a later wave.
 */
async function inWaves(preparations: Promise<ReadyEvent | undefined>[], apply: (wave: ReadyEvent[]) => Promise<void>): Promise<void> {
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
    const wave = ready;
    ready = [];
    if (wave.length > 0) await apply(wave);
  }
}

/** The event as its handler sees it, and that handler (none: the event is `ignored`). */
export function routeEvent(deps: Pick<ProcessingDeps, 'providers' | 'handlers'>, row: InboxEventRow): { event: InboxEvent; handler: EventHandler | undefined } {
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new ProviderNotConfiguredError(row.provider);
  const fact = provider.driver.toPaymentFact(row);
  const event: InboxEvent = { inboxId: row.id, provider, stored: row, kind: canonicalKind(provider, row, fact), fact };
  return { event, handler: deps.handlers.handlerFor(event.kind) };
}

async function routeAndPrepare(deps: ProcessingDeps, row: InboxEventRow, signal: AbortSignal | undefined): Promise<Omit<ReadyEvent, 'position' | 'row'>> {
  const { event, handler } = routeEvent(deps, row);
  const context = handler?.prepare ? await handler.prepare(event, signal ?? new AbortController().signal) : undefined;
  signal?.throwIfAborted();
  return { event, context, handler };
}

/** One event's result in its batch's transaction: `skipped` when it was no longer pending once locked. */
export type BatchOutcome = { outcome: 'skipped'; decision?: undefined } | { outcome: SettledStatus; decision: EventDecision | undefined };

export type Applied = BatchOutcome | { error: unknown };

/** Where a batch is applied: the pool (a transaction each) or an open transaction (a savepoint each). */
type ApplyDeps = { db: Database | Transaction };

/**
 * The batch in one transaction; if that fails, each event in its own, so one failure stays one.
 * `deps.db` may be an open transaction (a replay's dry run): each of these is then a savepoint in it.
 */
export async function applyInBatchThenAlone(deps: ApplyDeps, ready: ReadyEvent[]): Promise<[ReadyEvent, Applied][]> {
  if (ready.length === 0) return [];
  try {
    const outcomes = await applyInTransaction(deps, ready);
    return ready.map((item) => [item, outcomes.get(item.event.inboxId)!]);
  } catch (error) {
    if (ready.length === 1) return [[ready[0]!, { error }]];
  }
  const alone: [ReadyEvent, Applied][] = [];
  for (const item of ready) {
    try {
      const outcomes = await applyInTransaction(deps, [item]);
      alone.push([item, outcomes.get(item.event.inboxId)!]);
    } catch (error) {
      alone.push([item, { error }]);
    }
  }
  return alone;
}

async function applyInTransaction(deps: ApplyDeps, ready: ReadyEvent[]): Promise<Map<number, BatchOutcome>> {
  return deps.db.transaction(async (tx) => {
    // One transaction, two views of it: the inbox's statements take the executor, handlers the drizzle transaction.
    const inbox = drizzleExecutor(tx);
    const statuses = await lockEventsForProcessing(inbox, ready.map((item) => ({ id: item.event.inboxId, receivedAt: item.row.receivedAt })));
    const outcomes = new Map<number, BatchOutcome>(ready.map((item) => [item.event.inboxId, { outcome: 'skipped' }]));
    const byHandler = new Map<EventHandler | undefined, ReadyEvent[]>();
    for (const item of ready) {
      if (statuses.get(item.event.inboxId) !== 'pending') continue;
      const items = byHandler.get(item.handler) ?? [];
      items.push(item);
      byHandler.set(item.handler, items);
    }
    const marked: (EventOutcome & AppliedEvent)[] = [];
    for (const [handler, items] of byHandler) {
      const applied: AppliedEvent[] = handler ? await handler.apply(tx, items) : items.map((item) => notAPaymentEvent(item.event.kind));
      if (applied.length !== items.length) throw new Error(`handler "${handler?.name}" returned ${applied.length} outcomes for ${items.length} events`);
      items.forEach((item, i) => marked.push({ id: item.event.inboxId, receivedAt: item.row.receivedAt, ...applied[i]! }));
    }
    await markEventOutcomes(inbox, marked);
    for (const { id, outcome, decision } of marked) outcomes.set(id, { outcome, decision });
    return outcomes;
  });
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
  // The payment the application has not created yet is a decision too: the row may end failed on it.
  const decision = error instanceof PaymentNotYetKnown ? { decision: 'unknown_payment' as const, detail: { chargeId: error.chargeId } } : undefined;
  // Best effort: when the database itself is what failed, this fails too and the retry still happens.
  await recordFailedAttempt(drizzleExecutor(deps.db), job.inboxId, describeError(error).slice(0, MAX_ERROR_LENGTH), decision).catch(() => {});
  return { error };
}
