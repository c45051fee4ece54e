import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { DestinationConfig } from '../config/destinations-config.ts';
import type { Database, SqlExecutor } from '../db/client.ts';
import type { PaymentEventRow } from '../domain/payments/schema.ts';
import type { ForwardingMetrics } from './metrics.ts';
import { backoffSeconds, isThrottle, nextAttemptDelaySeconds, retryAfterSeconds } from './backoff.ts';
import type { DeliveryJobData } from './deliveries-queue.ts';
import type { DeliveryTimers } from './delivery-timers.ts';
import { enqueueLaneJobs } from './enqueue-deliveries.ts';
import type { LaneState } from './sql/lane-batch.ts';
import { countFailingLanes, disableDestination, endDestinationBackoff, noteLaneHeld, recordLaneFailure, startDestinationBackoff } from './sql/lanes.ts';
import type { EventTransport } from './event-transport.ts';
import { toPushedEventBody } from './payment-event-body.ts';
import type { PostResult } from './post-event.ts';
import { type SigningKey, signWebhook, signingKeys } from './sign.ts';

/** A destination as a run uses it: its configuration and its keys, decoded once. */
export interface DeliveryTarget {
  config: DestinationConfig;
  keys: readonly SigningKey[];
  /** How its events leave: an HTTP POST, or a publish to its broker (event-transport.ts). */
  transport: EventTransport;
  /**
   * When (performance.now()) this process last got a 2xx (or a broker's confirm) from it. A failure whose request began
   * before then is not the destination being down: it answered meanwhile.
   */
  lastDeliveredAt: number;
}

export function deliveryTargets(
  destinations: readonly DestinationConfig[],
  transports: ReadonlyMap<string, EventTransport>,
): ReadonlyMap<string, DeliveryTarget> {
  return new Map(
    destinations.map((config) => [
      config.name,
      { config, keys: signingKeys(config.secrets), transport: transports.get(config.name)!, lastDeliveredAt: -Infinity },
    ]),
  );
}

export interface DeliveryDeps {
  db: Database;
  /** The same pool, for the per-batch statements that run prepared (sql/lane-batch.ts). */
  sql: SqlExecutor;
  boss: PgBoss;
  targets: ReadonlyMap<string, DeliveryTarget>;
  logger: Logger;
  metrics?: ForwardingMetrics;
  /** Wall time: each attempt's webhook-timestamp, an HTTP-date Retry-After. */
  clock: () => Date;
  /** A POST's timeout and a run's budget. */
  timers: DeliveryTimers;
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

/** Why a lane sends nothing in this run, or undefined when it may send. */
export async function laneHeldBack(deps: DeliveryDeps, job: DeliveryJobData, state: LaneState): Promise<LaneRunOutcome | undefined> {
  if (!deps.targets.has(job.destination)) return 'unknown_destination';
  if (state.destinationDisabled) {
    await noteLaneHeld(deps.db, job.destination, job.paymentId, state);
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
  return undefined;
}

/** One event as this lane sends it: after `followsSequence`, the last event the destination answered 2xx. */
export interface LaneEvent {
  event: PaymentEventRow;
  followsSequence: number;
}

/** Sends one event, signed for this attempt, by the target's transport (a POST or a publish); a success is noted on the target. */
export async function postSigned(
  deps: Pick<DeliveryDeps, 'clock' | 'timers'>,
  target: DeliveryTarget,
  sent: LaneEvent,
  signal?: AbortSignal,
): Promise<PostResult> {
  const { event, followsSequence } = sent;
  const body = JSON.stringify(toPushedEventBody(event, followsSequence));
  const headers = signWebhook(target.keys, event.id, deps.clock(), body);
  const result = await target.transport.send({ event, body, headers, timeoutMs: target.config.timeoutMs, signal, timers: deps.timers });
  if (result.kind === 'delivered') target.lastDeliveredAt = performance.now();
  return result;
}

/** The probe got through: every lane that failed during the outage gets a job now. */
export async function resumeDestination(deps: DeliveryDeps, destination: string): Promise<void> {
  const paymentIds = await endDestinationBackoff(deps.db, destination);
  await enqueueLaneJobs(
    deps.boss,
    deps.db,
    paymentIds.map((paymentId) => ({ destination, paymentId })),
  );
  deps.logger.info({ destination, lanesResumed: paymentIds.length }, 'destination answers again: its backoff is over');
}

export interface LaneFailureContext {
  job: DeliveryJobData;
  target: DeliveryTarget;
  /** The lane as it now is: its delivered sequence after this run's 2xx answers, if any. */
  state: LaneState;
  /** This POST was the destination's probe after a backoff. */
  probing: boolean;
  /** performance.now() when the failed request began. */
  startedAt: number;
  result: Exclude<PostResult, { kind: 'delivered' }>;
}

/**
 * A failed POST at the lane's head event: 410 disables; anything else schedules the retry, no sooner
 * than the backoff (a Retry-After may lengthen it), and counts towards parking unless it asked to
 * wait (429, 503 with Retry-After) within the destination's patience.
 */
export async function handleFailure(deps: DeliveryDeps, failure: LaneFailureContext): Promise<LaneRunOutcome> {
  const { job, target, state, probing, result } = failure;
  const { config } = target;
  const log = deps.logger.child({ destination: job.destination, paymentId: job.paymentId, sequence: state.deliveredSequence + 1 });
  if (result.kind === 'gone') {
    deps.metrics?.failedAttempt(job.destination, 'gone');
    await noteLaneHeld(deps.db, job.destination, job.paymentId, state, { status: 410, error: 'HTTP 410 Gone: the destination is disabled' });
    if (await disableDestination(deps.db, job.destination, 'answered 410 Gone')) {
      log.error('destination answered 410 Gone: it is DISABLED, no event goes to it until an operator enables it again (inboxctl lanes enable)');
    }
    return 'destination_disabled';
  }
  deps.metrics?.failedAttempt(job.destination, result.status === null ? 'no_answer' : String(result.status));
  const retryAfter = retryAfterSeconds(result.retryAfter, deps.clock());
  const delaySeconds = nextAttemptDelaySeconds(state.attempts + state.throttles + 1, retryAfter, config);
  // While the destination as a whole is blamed (this run is its probe), no lane spends attempts.
  const recorded = await recordLaneFailure(deps.db, {
    ...job,
    deliveredSequence: state.deliveredSequence,
    answeredSequence: state.answeredSequence,
    status: result.status,
    error: result.error,
    counted: !probing,
    throttle: isThrottle(result.status, retryAfter),
    patienceSeconds: config.patienceSeconds,
    maxAttempts: config.maxAttempts,
    delaySeconds,
  });
  if (!recorded) return 'overtaken';
  if (recorded.parked) {
    log.warn({ attempts: recorded.attempts, error: result.error }, 'lane PARKED after its last attempt: its later events wait (inboxctl lanes retry | skip)');
    return 'parked';
  }
  const retryInSeconds = Math.round(delaySeconds * 10) / 10;
  log.info(
    { attempts: recorded.attempts, throttles: recorded.throttles, retryInSeconds, error: result.error },
    'delivery attempt failed; retrying with backoff',
  );
  // It answered 2xx to another request while this one failed: up, so this failure is the lane's —
  // a failed probe too (a probe sent just before the destination came back would otherwise start a
  // new backoff after another probe's 2xx had ended it).
  const answeredMeanwhile = target.lastDeliveredAt > failure.startedAt;
  const backoff = answeredMeanwhile ? undefined : await backOffIfDown(deps, config, probing, state.destinationBackoffTrips, retryAfter ?? 0);
  await enqueueLaneJobs(deps.boss, deps.db, [job], Math.max(delaySeconds, backoff ?? 0));
  return 'retry_scheduled';
}

/**
 * Many lanes failing at once (or a failed probe): the destination backs off as a whole — one that
 * answers 429 to everything as one that is down — never sooner than it asked (`atLeastSeconds`).
 */
async function backOffIfDown(
  deps: DeliveryDeps,
  config: DestinationConfig,
  probing: boolean,
  trips: number,
  atLeastSeconds: number,
): Promise<number | undefined> {
  if (!probing && (await countFailingLanes(deps.db, config.name, config.backoffAfterFailingLanes)) < config.backoffAfterFailingLanes) return undefined;
  const seconds = await startDestinationBackoff(deps.db, config.name, (n) => Math.max(atLeastSeconds, backoffSeconds(n, config)), trips);
  if (seconds !== undefined) {
    deps.logger.warn(
      { destination: config.name, backoffSeconds: Math.round(seconds) },
      'destination failing across many lanes: backing off as a whole (no lane spends attempts meanwhile)',
    );
  }
  return seconds;
}
