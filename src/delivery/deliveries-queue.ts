import type { JobInsert, PgBoss, Queue } from 'pg-boss';
import type { WorkerConfig } from '../config/config.ts';
import { DEAD_LETTER_QUEUE_OPTIONS } from '../queue/dead-letters.ts';

export const DELIVERIES_QUEUE = 'deliveries';
/** Lanes whose runs failed every retry (database errors, not destinations' answers): parked for a human. */
export const DELIVERIES_DEAD_LETTER_QUEUE = 'deliveries-dead-letter';

/** Queues the payments from before a destination was added, a batch a job (destination-start.ts). */
export const DELIVERY_SEEDS_QUEUE = 'delivery-seeds';
/** One seeding job per destination running and one waiting at most: a restart queues no second walk. */
const DELIVERY_SEEDS_QUEUE_OPTIONS = { policy: 'stately', retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: 300 } as const satisfies Omit<
  Queue,
  'name'
>;

/** A delivery job names a lane; the lane's row and the outbox say what is left to send. */
export interface DeliveryJobData {
  destination: string;
  paymentId: number;
}

/** One active job per lane, database-wide: a payment's events reach a destination one at a time, in order. */
export function laneKey(destination: string, paymentId: number): string {
  return `${destination}:${paymentId}`;
}

/** `startAfterSeconds`: relative, so pg-boss computes it with the database's clock, as the lane's next_attempt_at is. */
export function deliveryJob(lane: DeliveryJobData, startAfterSeconds?: number): JobInsert<DeliveryJobData> {
  return {
    data: { destination: lane.destination, paymentId: lane.paymentId },
    singletonKey: laneKey(lane.destination, lane.paymentId),
    ...(startAfterSeconds !== undefined && startAfterSeconds > 0 ? { startAfter: startAfterSeconds } : {}),
  };
}

/**
 * `singleton`: at most one active job per lane, and never a refused insert (a change's job must
 * exist). A delivery failure is no job failure: the job records it on the lane and queues the
 * retry itself (at the backoff, or the destination's Retry-After), so pg-boss's own retries only
 * cover a crashed or expired run (kill -9: the heartbeat goes stale and the job runs again).
 * A run stops starting new POSTs after a minute (deliver-lane.ts), so the expiry is far past any run.
 */
export function deliveriesQueueOptions(worker: WorkerConfig): Omit<Queue, 'name'> {
  return {
    policy: 'singleton',
    retryLimit: 20,
    retryDelay: 1,
    retryBackoff: true,
    retryDelayMax: 60,
    expireInSeconds: 900,
    ...(worker.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: worker.heartbeatSeconds }),
    retentionSeconds: 30 * 24 * 3600,
    deleteAfterSeconds: 24 * 3600,
    // Without it a run that fails every retry (a database error that repeats for this lane) ends
    // its job and nothing runs the lane again until the payment's next change: its events wait
    // unseen. Dead-lettered, the lane parks (delivery-workers.ts), where lanes --parked and the
    // parked-lanes alert find it.
    deadLetter: DELIVERIES_DEAD_LETTER_QUEUE,
    notify: true,
  };
}

export async function ensureDeliveriesQueue(boss: PgBoss, worker: WorkerConfig): Promise<void> {
  await boss.createQueue(DELIVERIES_DEAD_LETTER_QUEUE, DEAD_LETTER_QUEUE_OPTIONS);
  const { policy, ...updatable } = deliveriesQueueOptions(worker);
  await boss.createQueue(DELIVERIES_QUEUE, { policy, ...updatable });
  await boss.updateQueue(DELIVERIES_QUEUE, { ...updatable, heartbeatSeconds: worker.heartbeatSeconds ?? null });
  await boss.createQueue(DELIVERY_SEEDS_QUEUE, DELIVERY_SEEDS_QUEUE_OPTIONS);
}
