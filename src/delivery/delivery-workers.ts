import type { JobResult, JobWithMetadata, PgBoss, WorkOptions } from 'pg-boss';
import { describeError } from '../errors.ts';
import type { DeliveryDeps } from './deliver-lane.ts';
import { type EndedLane, deliverLanes } from './deliver-lanes.ts';
import { workDeadLetters } from '../queue/dead-letters.ts';
import { DELIVERIES_DEAD_LETTER_QUEUE, DELIVERIES_QUEUE, type DeliveryJobData } from './deliveries-queue.ts';
import { parkLaneAfterFailedRuns } from './sql/lanes.ts';

/**
 * Work loops, each fetching a batch of lanes (at most one job per lane: singleton ranking) and
 * running them side by side. A batch completes when its slowest lane does, so several loops keep
 * one destination's timeouts from holding up the rest.
 */
export const DELIVERY_LOOPS = 4;
const LANES_PER_BATCH = 25;

/**
 * Completes the jobs of lanes that ended while a straggler of their batch still sends (the batch's
 * own completion passes over them). A failure here only delays them: the batch completes them too.
 */
function settleEarly(boss: PgBoss, deps: DeliveryDeps): (ended: readonly EndedLane<JobWithMetadata<DeliveryJobData>>[]) => Promise<void> {
  return async (ended) => {
    const byOutcome = new Map<string, EndedLane<JobWithMetadata<DeliveryJobData>>[]>();
    for (const lane of ended) byOutcome.set(lane.outcome, [...(byOutcome.get(lane.outcome) ?? []), lane]);
    try {
      for (const [outcome, lanes] of byOutcome)
        await boss.complete(
          DELIVERIES_QUEUE,
          lanes.map(({ job }) => ({ id: job.id, retryCount: job.retryCount })),
          { outcome },
        );
    } catch (error) {
      deps.logger.warn({ err: error, lanes: ended.length }, 'completing ended lanes ahead of their batch failed; they complete with it');
    }
  };
}

async function runJobs(boss: PgBoss, deps: DeliveryDeps, jobs: JobWithMetadata<DeliveryJobData>[]): Promise<JobResult[]> {
  try {
    const outcomes = await deliverLanes(deps, jobs, settleEarly(boss, deps));
    return jobs.map((job, i) => ({ id: job.id, status: 'completed', output: { outcome: outcomes[i] } }));
  } catch (error) {
    // A database problem, not a destination's: pg-boss retries the batch's runs with its own backoff
    // (a lane whose events were answered but not yet recorded sends them again: at least once).
    deps.logger.warn({ err: error, lanes: jobs.length, attempt: Math.max(...jobs.map((job) => job.retryCount)) + 1 }, 'delivery run failed; retried');
    return jobs.map((job) => ({ id: job.id, status: 'failed', output: { error: describeError(error) } }));
  }
}

/**
 * A lane whose runs failed every pg-boss retry parks, with the last run's error: the one state of a
 * lane that needs a human (fix the cause, then inboxctl lanes retry). Left as it was, no job would
 * run the lane again before its payment's next change.
 */
async function startDeadLetterWorker(boss: PgBoss, deps: DeliveryDeps, pollingIntervalSeconds: number): Promise<void> {
  await workDeadLetters<DeliveryJobData>(boss, DELIVERIES_DEAD_LETTER_QUEUE, pollingIntervalSeconds, async ({ data, runs, finalFailure }) => {
    const reason = `its delivery runs failed ${runs} times (not the destination's answers): ${finalFailure}`;
    if (await parkLaneAfterFailedRuns(deps.db, data.destination, data.paymentId, reason)) {
      deps.logger.error(
        { destination: data.destination, paymentId: data.paymentId, runs, reason },
        'delivery lane parked after its runs kept failing: it needs a human (fix the cause, then inboxctl lanes retry)',
      );
    }
  });
}

export async function startDeliveryWorkers(boss: PgBoss, deps: DeliveryDeps, pollingIntervalSeconds: number): Promise<void> {
  const work = {
    batchSize: LANES_PER_BATCH,
    localConcurrency: 1,
    perJobResults: true,
    includeMetadata: true,
    burstWhenBatchFull: true,
    pollingIntervalSeconds,
    notifyPollingIntervalSeconds: pollingIntervalSeconds,
  } as const satisfies WorkOptions;
  for (let i = 0; i < DELIVERY_LOOPS; i += 1) {
    let workerId: string | undefined;
    // After a batch the loop wakes itself: a lane's next job was skipped while its run was active.
    workerId = await boss.work<DeliveryJobData, unknown, typeof work>(DELIVERIES_QUEUE, work, async (jobs) => {
      const results = await runJobs(boss, deps, jobs);
      if (workerId) boss.notifyWorker(workerId);
      return results;
    });
  }
  await startDeadLetterWorker(boss, deps, pollingIntervalSeconds);
  deps.logger.info({ destinations: [...deps.targets.keys()] }, 'pushing payment events to destinations');
}
