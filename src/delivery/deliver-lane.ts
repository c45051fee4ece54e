import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { DestinationConfig } from '../config/destinations-config.ts';
import type { Database } from '../db/client.ts';
import type { PaymentEventRow } from '../domain/payments/schema.ts';
import type { ForwardingMetrics } from '../observability/metrics.ts';
import { backoffSeconds, nextAttemptDelaySeconds, retryAfterSeconds } from './backoff.ts';
import type { DeliveryJobData } from './deliveries-queue.ts';
import { destinationWants, enqueueLaneJobs } from './enqueue-deliveries.ts';
import {
  type LaneState,
  countFailingLanes,
  disableDestination,
  endDestinationBackoff,
  markEventDelivered,
  noteLaneHeld,
  readLaneState,
  readUndeliveredEvents,
  recordLaneFailure,
  startDestinationBackoff,
} from './lane-sql.ts';
import { toPaymentEventBody } from './payment-event-body.ts';
import { type PostResult, postEvent } from './post-event.ts';
import { signWebhook, signingKey } from './sign.ts';

/** A destination as a run uses it: its configuration and its key, decoded once. */
export interface DeliveryTarget {
  config: DestinationConfig;
  key: Buffer;
}

export function deliveryTargets(destinations: readonly DestinationConfig[]): ReadonlyMap<string, DeliveryTarget> {
  return new Map(destinations.map((config) => [config.name, { config, key: signingKey(config.secret) }]));
}

export interface DeliveryDeps {
  db: Database;
  boss: PgBoss;
  targets: ReadonlyMap<string, DeliveryTarget>;
  logger: Logger;
  metrics?: ForwardingMetrics;
  clock: () => Date;
}

/** What a run did, for its job's output and the tests. */
export type LaneRunOutcome =
  | 'delivered'
  | 'nothing_to_send'
  | 'unknown_destination'
  | 'destination_disabled'
  | 'destination_backing_off'
  | 'parked'
  | 'waiting_for_retry'
  | 'retry_scheduled'
  | 'continued'
  | 'overtaken';

const EVENTS_PER_READ = 50;
/** A run starts no POST after this long; a new job carries on, so a run stays far inside its expiry. */
const RUN_BUDGET_MS = 60_000;

/**
 * One run over one lane: sends its undelivered events one at a time, in sequence order, each only
 * after the one before was answered 2xx. No database transaction or lock is held across a POST (an
 * open writing transaction would hold back the feed's horizon): the singleton queue keeps one run
 * per lane, and every write is conditional on the lane being where the run found it.
 */
export async function deliverLane(deps: DeliveryDeps, job: DeliveryJobData, signal?: AbortSignal): Promise<LaneRunOutcome> {
  const target = deps.targets.get(job.destination);
  if (!target) return 'unknown_destination';
  const state = await readLaneState(deps.db, job.destination, job.paymentId);
  if (state.destinationDisabled) {
    await noteLaneHeld(deps.db, job.destination, job.paymentId);
    return 'destination_disabled';
  }
  if (state.parked) return 'parked';
  if (state.waiting) return 'waiting_for_retry';
  if (state.destinationBackoffSeconds > 0) {
    // Each lane waits for the backoff's end on its own job, spread so they do not all probe at once.
    const spread = Math.min(30, state.destinationBackoffSeconds / 10) * Math.random();
    await enqueueLaneJobs(deps.boss, deps.db, [job], state.destinationBackoffSeconds + spread);
    return 'destination_backing_off';
  }
  return sendInOrder(deps, target, job, state, signal);
}

async function sendInOrder(deps: DeliveryDeps, target: DeliveryTarget, job: DeliveryJobData, state: LaneState, signal?: AbortSignal): Promise<LaneRunOutcome> {
  const started = Date.now();
  let delivered = state.deliveredSequence;
  let probing = state.destinationBackoffTrips > 0;
  for (;;) {
    const events = await readUndeliveredEvents(deps.db, job.paymentId, delivered, EVENTS_PER_READ);
    if (events.length === 0) return delivered === state.deliveredSequence ? 'nothing_to_send' : 'delivered';
    for (const event of events) {
      if (signal?.aborted) return 'continued';
      if (Date.now() - started > RUN_BUDGET_MS) {
        await enqueueLaneJobs(deps.boss, deps.db, [job]);
        return 'continued';
      }
      const wanted = destinationWants(target.config, event.provider, event.status);
      const result: PostResult = wanted ? await post(target, event, deps.clock(), signal) : { kind: 'delivered', status: 0 };
      if (result.kind !== 'delivered') return handleFailure(deps, target, job, { ...state, deliveredSequence: delivered }, probing, result);
      if (!(await markEventDelivered(deps.db, job.destination, job.paymentId, event.sequence, wanted ? result.status : null))) return 'overtaken';
      delivered = event.sequence;
      if (wanted) deps.metrics?.delivered(job.destination, (Date.now() - event.createdAt.getTime()) / 1000);
      if (probing) {
        probing = false;
        await resumeDestination(deps, job.destination);
      }
    }
    // A short read was the whole lane: an event committed since has a job of its own queued.
    if (events.length < EVENTS_PER_READ) return 'delivered';
  }
}

function post(target: DeliveryTarget, event: PaymentEventRow, now: Date, signal?: AbortSignal): Promise<PostResult> {
  const body = JSON.stringify(toPaymentEventBody(event));
  return postEvent({ url: target.config.url, headers: signWebhook(target.key, event.id, now, body), body, timeoutMs: target.config.timeoutMs, signal });
}

/** The probe got through: every lane that failed during the outage gets a job now. */
async function resumeDestination(deps: DeliveryDeps, destination: string): Promise<void> {
  const paymentIds = await endDestinationBackoff(deps.db, destination);
  await enqueueLaneJobs(deps.boss, deps.db, paymentIds.map((paymentId) => ({ destination, paymentId })));
  deps.logger.info({ destination, lanesResumed: paymentIds.length }, 'destination answers again: its backoff is over');
}

async function handleFailure(
  deps: DeliveryDeps,
  target: DeliveryTarget,
  job: DeliveryJobData,
  state: LaneState,
  probing: boolean,
  result: Exclude<PostResult, { kind: 'delivered' }>,
): Promise<LaneRunOutcome> {
  const { config } = target;
  const log = deps.logger.child({ destination: job.destination, paymentId: job.paymentId, sequence: state.deliveredSequence + 1 });
  if (result.kind === 'gone') {
    deps.metrics?.failedAttempt(job.destination, 'gone');
    await noteLaneHeld(deps.db, job.destination, job.paymentId, { status: 410, error: 'HTTP 410 Gone: the destination is disabled' });
    if (await disableDestination(deps.db, job.destination, 'answered 410 Gone')) {
      log.error('destination answered 410 Gone: it is DISABLED, no event goes to it until an operator enables it again (inboxctl lanes enable)');
    }
    return 'destination_disabled';
  }
  deps.metrics?.failedAttempt(job.destination, result.status === null ? 'no_answer' : String(result.status));
  const retryAfter = retryAfterSeconds(result.retryAfter, deps.clock());
  const delaySeconds = nextAttemptDelaySeconds(state.attempts + 1, retryAfter, config);
  // While the destination as a whole is blamed (this run is its probe), no lane spends attempts.
  const recorded = await recordLaneFailure(deps.db, {
    ...job,
    deliveredSequence: state.deliveredSequence,
    status: result.status,
    error: result.error,
    counted: !probing,
    maxAttempts: config.maxAttempts,
    delaySeconds,
  });
  if (!recorded) return 'overtaken';
  if (recorded.parked) {
    log.warn({ attempts: recorded.attempts, error: result.error }, 'lane PARKED after its last attempt: its later events wait (inboxctl lanes retry | skip)');
    return 'parked';
  }
  log.info({ attempts: recorded.attempts, retryInSeconds: Math.round(delaySeconds * 10) / 10, error: result.error }, 'delivery attempt failed; retrying with backoff');
  const backoff = await backOffIfDown(deps, config, probing, state.destinationBackoffTrips);
  await enqueueLaneJobs(deps.boss, deps.db, [job], Math.max(delaySeconds, backoff ?? 0));
  return 'retry_scheduled';
}

/** Many lanes failing at once (or a failed probe): the destination backs off as a whole. */
async function backOffIfDown(deps: DeliveryDeps, config: DestinationConfig, probing: boolean, trips: number): Promise<number | undefined> {
  if (!probing && (await countFailingLanes(deps.db, config.name, config.backoffAfterFailingLanes)) < config.backoffAfterFailingLanes) return undefined;
  const seconds = await startDestinationBackoff(deps.db, config.name, (n) => backoffSeconds(n, config), trips);
  if (seconds !== undefined) {
    deps.logger.warn({ destination: config.name, backoffSeconds: Math.round(seconds) }, 'destination failing across many lanes: backing off as a whole (no lane spends attempts meanwhile)');
  }
  return seconds;
}
