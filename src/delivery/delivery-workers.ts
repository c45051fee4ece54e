import type { JobResult, JobWithMetadata, PgBoss, WorkOptions } from 'pg-boss';
import { describeError } from '../errors.ts';
import type { DeliveryDeps } from './deliver-lane.ts';
import { deliverLanes } from './deliver-lanes.ts';
import { DELIVERIES_QUEUE, type DeliveryJobData } from './deliveries-queue.ts';

/**
 * Work loops, each fetching a batch of lanes (at most one job per lane: singleton ranking) and
 * running them side by side. A batch completes when its slowest lane does, so several loops keep
 * one destination's timeouts from holding up the rest.
 */
export const DELIVERY_LOOPS = 4;
const LANES_PER_BATCH = 25;

async function runJobs(deps: DeliveryDeps, jobs: JobWithMetadata<DeliveryJobData>[]): Promise<JobResult[]> {
  try {
    const outcomes = await deliverLanes(deps, jobs);
    return jobs.map((job, i) => ({ id: job.id, status: 'completed', output: { outcome: outcomes[i] } }));
  } catch (error) {
    // A database problem, not a destination's: pg-boss retries the batch's runs with its own backoff
    // (a lane whose events were answered but not yet recorded sends them again: at least once).
    deps.logger.warn({ err: error, lanes: jobs.length, attempt: Math.max(...jobs.map((job) => job.retryCount)) + 1 }, 'delivery run failed; retried');
    return jobs.map((job) => ({ id: job.id, status: 'failed', output: { error: describeError(error) } }));
  }
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
      const results = await runJobs(deps, jobs);
      if (workerId) boss.notifyWorker(workerId);
      return results;
    });
  }
  deps.logger.info({ destinations: [...deps.targets.keys()] }, 'pushing payment events to destinations');
}
