import { setTimeout as delay } from 'node:timers/promises';
import type { JobResult, JobWithMetadata, PgBoss, WorkOptions } from 'pg-boss';
import type { Logger } from 'pino';
import type { WorkerConfig } from '../config/config.ts';
import type { IngestFirstConfig } from '../config/ingest-first-config.ts';
import { type Database, drizzleExecutor } from '../db/client.ts';
import { describeError } from '../errors.ts';
import { type IngestPressure, NO_INGEST_PRESSURE } from '../inbox/ingest-pressure.ts';
import type { IngestFirstMetrics, ProcessingMetrics } from './metrics.ts';
import { workDeadLetters } from '../queue/dead-letters.ts';
import { enqueueWebhookJobs } from '../queue/enqueue.ts';
import { WEBHOOKS_DEAD_LETTER_QUEUE, WEBHOOKS_QUEUE, type WebhookJobData } from '../queue/queues.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import type { PaymentsHandlerDeps } from './payments-handler.ts';
import { createBuiltInHandlers } from './built-in-handlers.ts';
import { type HandlerRegistry, createHandlerRegistry } from './handlers.ts';
import { findEventsByIds } from '../inbox/sql/find-events.ts';
import { markEventFailed, noteEventDeferred } from '../inbox/sql/mark-events.ts';
import { type EventResult, type ProcessingDeps, processBatch } from './process-batch.ts';
import { type IngestFirstApplier, createIngestFirstApplier } from './ingest-first.ts';

export interface ProcessingOptions {
  boss: PgBoss;
  db: Database;
  providers: ReadonlyMap<string, ConfiguredProvider>;
  worker: WorkerConfig;
  logger: Logger;
  /** Default: the built-in handlers (built-in-handlers.ts), re-reading charges through `refetcher`. */
  handlers?: HandlerRegistry;
  metrics?: ProcessingMetrics;
  /** The gateway API clients (src/refetch); without it every payment kind is ordered by occurred_at. */
  refetcher?: ChargeRefetcher;
  /** Queues the push deliveries of payment changes, inside their transaction (src/delivery). */
  announceChanges?: PaymentsHandlerDeps['announceChanges'];
  /** The receiver of this process (role `all` with INGEST_FIRST=on); default: none, the workers never yield. */
  ingestPressure?: IngestPressure;
  ingestFirst: IngestFirstConfig;
  ingestFirstMetrics?: IngestFirstMetrics;
}

/**
 * A new job for the event, not before `startAfter`, then the current job completes: the row
 * stays pending and keeps its attempt count (the job's retry budget is not spent waiting for a
 * gateway, nor renewed: the new job has the retries the current one had left, so an event that
 * failed before the breaker opened still ends `failed` after WORKER_MAX_ATTEMPTS attempts in all).
 * The new job commits first; completing the old one after a crash in between leaves two
 * jobs of one event, which the inbox row lock makes harmless.
 */
function eventDeferrer(boss: PgBoss, db: Database, logger: Logger): NonNullable<ProcessingDeps['deferEvent']> {
  return async (inboxId, startAfter, reason, retriesLeft) => {
    const row = (await findEventsByIds(drizzleExecutor(db), [{ id: inboxId }])).get(inboxId);
    if (row?.status !== 'pending') return;
    await db.transaction((tx) => enqueueWebhookJobs(boss, drizzleExecutor(tx), [row], { startAfter, retryLimit: retriesLeft }));
    await noteEventDeferred(drizzleExecutor(db), inboxId, reason);
    logger.info(
      { inboxId, provider: row.provider, startAfter, reason },
      'gateway API not to be called yet (breaker open or Retry-After): event queued again for then',
    );
  };
}

/** A number only: job data is JSON anyone with database access could have written. */
function receivedAtOf(data: WebhookJobData): Date | undefined {
  return typeof data.receivedAtMs === 'number' && Number.isFinite(data.receivedAtMs) ? new Date(data.receivedAtMs) : undefined;
}

/** pg-boss's per-job result for one job of the batch; a failure is logged with its attempt. */
function jobResult(job: JobWithMetadata<WebhookJobData>, result: EventResult, logger: Logger): JobResult {
  if ('outcome' in result) return { id: job.id, status: 'completed', output: { outcome: result.outcome } };
  const attempt = job.retryCount + 1;
  // Every line about this job carries the inbox row id.
  logger
    .child({ inboxId: job.data.inboxId })
    .warn(
      { err: result.error, attempt, maxAttempts: job.retryLimit + 1 },
      attempt > job.retryLimit ? 'processing failed on the last attempt' : 'processing attempt failed; pg-boss retries it with backoff',
    );
  return { id: job.id, status: 'failed', output: { error: describeError(result.error) } };
}

/** A pause that ends early, without an error, when the job's signal aborts (shutdown). */
const pause = (ms: number, signal: AbortSignal | undefined) => delay(ms, undefined, { signal }).catch(() => undefined);

function ingestFirstApplier(options: ProcessingOptions): IngestFirstApplier {
  return createIngestFirstApplier({
    pressure: options.ingestPressure ?? NO_INGEST_PRESSURE,
    sliceSize: options.ingestFirst.yieldBatchSize,
    pauseMs: options.ingestFirst.yieldPauseMs,
    // A tenth of the expiry: a yielding batch never comes near being retried while it waits.
    maxHoldMs: (options.worker.expireInSeconds * 1000) / 10,
    metrics: options.ingestFirstMetrics,
    now: () => performance.now(),
    sleep: pause,
  });
}

async function startWebhookWorkers(boss: PgBoss, deps: ProcessingDeps, applier: IngestFirstApplier, worker: WorkerConfig, logger: Logger): Promise<void> {
  const webhookWork = {
    // Batches, not single jobs: a worker sleeps its polling interval between fetches, so
    // batch 1 drains a few jobs per second. A full batch re-fetches at once (burst); NOTIFY wakes
    // idle workers for new jobs; retries are found by polling, so the NOTIFY backstop polls as
    // often as plain polling would.
    batchSize: worker.batchSize,
    localConcurrency: 1,
    perJobResults: true,
    includeMetadata: true,
    burstWhenBatchFull: true,
    pollingIntervalSeconds: worker.pollingIntervalSeconds,
    notifyPollingIntervalSeconds: worker.pollingIntervalSeconds,
  } as const satisfies WorkOptions;
  // One work() per worker (not localConcurrency) so each knows its own id: after a batch it wakes
  // itself. A charge's next event was skipped by every fetch while the previous one was active
  // (singleton), and NOTIFY does not fire again for it; without this, a burst of one charge's
  // events would drain one per polling interval. An empty fetch runs no handler, so this never
  // spins.
  for (let i = 0; i < worker.concurrency; i += 1) {
    let workerId: string | undefined;
    workerId = await boss.work<WebhookJobData, unknown, typeof webhookWork>(WEBHOOKS_QUEUE, webhookWork, async (jobs) => {
      const items = jobs.map((job) => ({
        inboxId: job.data.inboxId,
        receivedAt: receivedAtOf(job.data),
        signal: job.signal,
        retriesLeft: Math.max(0, job.retryLimit - job.retryCount),
      }));
      const results = await applier.apply(items, (slice) => processBatch(deps, slice), jobs[0]?.signal);
      if (workerId) boss.notifyWorker(workerId);
      return jobs.map((job, i) => jobResult(job, results[i]!, logger));
    });
  }
}

/**
 * A job pg-boss dead-lettered: every attempt failed, so the event becomes `failed`, the one inbox
 * status that needs a human. markEventFailed keeps the row's last recorded error (the letter's
 * fills in when none was), changes a row no longer pending not at all (a replay may already have
 * fixed it), and a letter that comes again changes nothing.
 */
async function startDeadLetterWorker(boss: PgBoss, db: Database, worker: WorkerConfig, logger: Logger): Promise<void> {
  await workDeadLetters<WebhookJobData>(boss, WEBHOOKS_DEAD_LETTER_QUEUE, worker.pollingIntervalSeconds, async (letter) => {
    if (await markEventFailed(drizzleExecutor(db), letter.data.inboxId, letter.finalFailure)) {
      logger.error(
        { inboxId: letter.data.inboxId, attempts: letter.runs },
        'event failed after its last attempt: it needs a human (fix the cause, then inboxctl replay)',
      );
    }
  });
}

/**
 * The workers, registered on the process's pg-boss, so `boss.stop({ graceful, timeout })` stops
 * their polling and waits for their jobs. Per-resource serialisation comes from the queue's
 * `singleton` policy (at most one active job per charge database-wide, and at most one per key in
 * a fetched batch); the inbox row lock and the domain row lock make a second job of the same
 * event, or an expired attempt still running, harmless. A fetched batch is applied in one
 * transaction (process-batch.ts: processBatch); each job still gets its own result, and a failure of one event
 * never fails its neighbours.
 */
export async function startProcessing(options: ProcessingOptions): Promise<void> {
  const { boss, worker, logger } = options;
  const deps: ProcessingDeps = {
    db: options.db,
    providers: options.providers,
    handlers: options.handlers ?? createHandlerRegistry(createBuiltInHandlers({ refetcher: options.refetcher, announceChanges: options.announceChanges })),
    metrics: options.metrics,
    deferEvent: eventDeferrer(boss, options.db, logger),
  };
  await startWebhookWorkers(boss, deps, ingestFirstApplier(options), worker, logger);
  await startDeadLetterWorker(boss, options.db, worker, logger);
  logger.info({ batchSize: worker.batchSize, concurrency: worker.concurrency, ingestFirst: options.ingestPressure !== undefined }, 'processing webhooks');
}
