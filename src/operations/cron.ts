import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { OperationsConfig } from '../config/config.ts';
import { type Database, drizzleExecutor } from '../db/client.ts';
import { INBOX_PARTITION_MONTHS_AHEAD, createMonthPartitionsAhead } from '../db/inbox-partitions.ts';
import type { OperationsMetrics } from './metrics.ts';
import { createArchiveWriter } from './archive.ts';
import { PartialResultError } from './errors.ts';
import { type RetentionPolicy, type RetentionRun, applyRetention } from './retention.ts';
import { sweepPendingEvents } from './sweep-pending-events.ts';

export const SWEEP_QUEUE = 'inbox-sweep';
export const RETENTION_QUEUE = 'inbox-retention';

export interface OperationsCronDeps {
  db: Database;
  /** Must have been started with `schedule: true` (worker roles) for the cron to fire. */
  boss: PgBoss;
  clock: () => Date;
  logger: Logger;
  providers: ReadonlyMap<string, RetentionPolicy>;
  operations: OperationsConfig;
  /** Runs and their counts (operations/metrics.ts). */
  metrics?: OperationsMetrics;
}

/**
 * `exclusive`: at most one created, retrying or running job per queue, database-wide. A tick that
 * comes while a run is still queued or running is dropped (pg-boss's send returns null and its
 * timekeeper moves on), so runs never overlap. Dropping a cron tick is fine: the next one does the
 * same work. (Event jobs are never sent to an exclusive queue; there a drop would lose an event.)
 * No retries: a failed run is simply the next tick's work.
 */
export async function ensureOperationsQueues(boss: PgBoss): Promise<void> {
  const queues = {
    [SWEEP_QUEUE]: { retryLimit: 0, expireInSeconds: 600, deleteAfterSeconds: 2 * 86_400 },
    [RETENTION_QUEUE]: { retryLimit: 0, expireInSeconds: 6 * 3600, deleteAfterSeconds: 30 * 86_400 },
  };
  for (const [name, options] of Object.entries(queues)) {
    // createQueue leaves an existing queue as it is; the policy is fixed, the rest is kept current.
    await boss.createQueue(name, { policy: 'exclusive', ...options });
    await boss.updateQueue(name, options);
  }
}

/**
 * Registers the sweeper and the daily retention run as pg-boss schedules and works them. Every
 * worker instance calls this; pg-boss's cron pass runs on one instance at a time and files one
 * job per occurrence, and the exclusive queues keep runs from overlapping.
 */
export async function startOperationsCron(deps: OperationsCronDeps): Promise<void> {
  const { boss, operations } = deps;
  await ensureOperationsQueues(boss);
  await boss.schedule(SWEEP_QUEUE, operations.sweepCron, {}, { tz: 'UTC' });
  await boss.schedule(RETENTION_QUEUE, operations.retentionCron, {}, { tz: 'UTC' });
  const logger = deps.logger.child({ component: 'operations-cron' });

  await boss.work(SWEEP_QUEUE, async () => {
    try {
      const result = await sweepPendingEvents(deps, { olderThanSeconds: operations.sweepPendingOlderThanSeconds, limit: operations.sweepBatchSize });
      deps.metrics?.sweeperRun('ok', result.requeued);
      // A re-queued event means something lost its job: worth a look, not an alarm.
      if (result.requeued > 0) logger.warn(result, 'sweep re-queued pending events that had no job');
      else logger.debug(result, 'sweep found nothing lost');
    } catch (error) {
      deps.metrics?.sweeperRun('error', 0);
      logger.error({ err: error, queue: SWEEP_QUEUE }, 'sweep failed; the next tick tries again');
      throw error;
    }
  });

  await boss.work(RETENTION_QUEUE, async ([job]) => {
    const archive = createArchiveWriter({
      clock: deps.clock,
      onSetAside: (file, aside, reason) => logger.warn({ file, aside, reason }, 'damaged archive file set aside; a fresh one was started'),
    });
    try {
      // Daily, besides each start: a long-running deployment never reaches a month without its partition.
      const partitions = await deps.db.transaction((tx) => createMonthPartitionsAhead(drizzleExecutor(tx), deps.clock(), INBOX_PARTITION_MONTHS_AHEAD));
      if (partitions.created.length > 0) logger.info(partitions, 'inbox partitions created ahead');
      if (partitions.leftToDefault.length > 0) logger.warn(partitions, 'months already holding rows in the default partition get no partition of their own');
      const run = await applyRetention(
        { db: deps.db, archive },
        { providers: deps.providers, now: deps.clock(), archiveDir: operations.archiveDir, batchSize: operations.retentionBatchSize, signal: job?.signal },
      );
      deps.metrics?.retentionRun('ok', deletedByProvider(run));
      logRetentionRun(logger, run);
    } catch (error) {
      // The months dropped and the batches deleted before the failure are committed: counted and told like a finished run's.
      const done = error instanceof PartialResultError ? (error.partial as RetentionRun) : undefined;
      deps.metrics?.retentionRun('error', done ? deletedByProvider(done) : []);
      if (done) logRetentionRun(logger, done);
      const failure = error instanceof PartialResultError ? error.cause : error;
      logger.error({ err: failure, queue: RETENTION_QUEUE }, 'retention failed; rows not yet archived stay until the next run');
      throw error;
    }
  });
}

/** Every row the run archived and deleted, per provider: a month dropped whole counts its rows too. */
function deletedByProvider(run: RetentionRun): Array<{ provider: string; deleted: number }> {
  const deleted = new Map<string, number>();
  const count = (provider: string, rows: number) => deleted.set(provider, (deleted.get(provider) ?? 0) + rows);
  for (const { byProvider } of run.partitions.dropped) for (const [provider, rows] of Object.entries(byProvider)) count(provider, rows);
  for (const result of run.providers) count(result.provider, result.deleted);
  return [...deleted].map(([provider, rows]) => ({ provider, deleted: rows }));
}

function logRetentionRun(logger: Logger, run: RetentionRun): void {
  logger.info(run.partitions, 'retention: months archived whole and dropped, months kept for unsettled rows');
  for (const result of run.providers)
    logger.info(
      {
        provider: result.provider,
        cutoff: result.cutoff,
        deleted: result.deleted,
        files: result.files,
        keyCutoff: result.keyCutoff,
        keysDeleted: result.keysDeleted,
        facts: result.facts,
        stopped: result.stopped,
      },
      'retention run',
    );
}
