import type { PaymentEventRow } from '../domain/payments/schema.ts';
import { type LaneRunOutcome, type DeliveryDeps, type DeliveryTarget, handleFailure, laneHeldBack, postSigned, resumeDestination } from './deliver-lane.ts';
import { type DeliveryJobData, laneKey } from './deliveries-queue.ts';
import { destinationWants, enqueueLaneJobs } from './enqueue-deliveries.ts';
import { type LaneState, markLanesDelivered, readLaneStates, readLanesEvents } from './lane-batch-sql.ts';
import type { PostResult } from './post-event.ts';

export interface LaneJob {
  data: DeliveryJobData;
  /** The job's: aborted when pg-boss gives up on it (expiry, shutdown). */
  signal?: AbortSignal;
}

const EVENTS_PER_READ = 50;
/** A run starts no POST after this long; a new job carries on, so a run stays far inside its expiry. */
const RUN_BUDGET_MS = 60_000;

/** One lane's run inside a batch. */
interface LaneRun {
  job: LaneJob;
  target: DeliveryTarget;
  state: LaneState;
  /** How far it got (2xx, or not for this destination), and how far the lane row says. */
  delivered: number;
  marked: number;
  lastStatus: number | null;
  /** This run's first POST is the destination's probe after a backoff; a 2xx ends the backoff. */
  probing: boolean;
  probeAnswered: boolean;
  failure?: { result: Exclude<PostResult, { kind: 'delivered' }>; startedAt: number; probing: boolean };
  outcome?: LaneRunOutcome;
}

/**
 * One run over a batch of lanes: each lane sends its undelivered events one at a time, in sequence
 * order, each only after the one before was answered 2xx; the lanes go side by side. The database
 * sees the batch, not the event: one statement reads every lane's state, one reads the next events
 * of all of them, one records how far each got. A crash between a 2xx and that record sends those
 * events again, with the same webhook-id (at least once). No transaction or lock is held across a
 * POST (an open writing transaction would hold back the feed's horizon): the singleton queue keeps
 * one run per lane, and every write is conditional on the lane being where the run found it.
 */
export async function deliverLanes(deps: DeliveryDeps, jobs: readonly LaneJob[]): Promise<LaneRunOutcome[]> {
  const states = await readLaneStates(deps.sql, jobs.map((job) => job.data));
  const outcomes = new Map<LaneJob, LaneRunOutcome>();
  const runs: LaneRun[] = [];
  const lanes = new Set<string>();
  for (const job of jobs) {
    const key = laneKey(job.data.destination, job.data.paymentId);
    // pg-boss's singleton policy runs one job per lane; were two in one batch, the first sends for both.
    if (lanes.has(key)) outcomes.set(job, 'nothing_to_send');
    lanes.add(key);
  }
  await Promise.all(
    jobs.map(async (job, i) => {
      if (outcomes.has(job)) return;
      const state = states[i]!;
      const held = await laneHeldBack(deps, job.data, state);
      if (held) return outcomes.set(job, held);
      const target = deps.targets.get(job.data.destination)!;
      runs.push({ job, target, state, delivered: state.deliveredSequence, marked: state.deliveredSequence, lastStatus: null, probing: state.destinationBackoffTrips > 0, probeAnswered: false });
    }),
  );
  await sendInRounds(deps, runs);
  for (const run of runs) outcomes.set(run.job, run.outcome!);
  return jobs.map((job) => outcomes.get(job)!);
}

/** Rounds of read → send → record, until every lane has sent all it had, failed, or stopped. */
async function sendInRounds(deps: DeliveryDeps, runs: LaneRun[]): Promise<void> {
  const started = Date.now();
  let active = runs;
  while (active.length > 0) {
    const events = await readLanesEvents(deps.db, active.map((run) => ({ paymentId: run.job.data.paymentId, afterSequence: run.delivered })), EVENTS_PER_READ);
    await Promise.all(active.map((run, i) => sendEvents(deps, run, events[i]!, started)));
    await recordProgress(deps, active);
    const more: LaneRun[] = [];
    const continued: DeliveryJobData[] = [];
    for (const [i, run] of active.entries()) {
      if (run.outcome === 'continued' && !run.job.signal?.aborted) continued.push(run.job.data);
      if (run.outcome !== undefined) continue;
      if (run.failure) {
        const attempts = run.delivered > run.state.deliveredSequence ? 0 : run.state.attempts;
        run.outcome = await handleFailure(deps, { job: run.job.data, target: run.target, state: { ...run.state, deliveredSequence: run.delivered, attempts }, ...run.failure });
      } else if (events[i]!.length === EVENTS_PER_READ) {
        more.push(run);
      } else {
        // A short read was the whole lane: an event committed since has a job of its own queued.
        run.outcome = run.delivered === run.state.deliveredSequence ? 'nothing_to_send' : 'delivered';
      }
    }
    // Out of time: a new job carries on from where the lane row says.
    await enqueueLaneJobs(deps.boss, deps.db, continued);
    active = more;
  }
}

/** The lane's events in order, until one fails, the job is aborted, or the run's time is up. */
async function sendEvents(deps: DeliveryDeps, run: LaneRun, events: readonly PaymentEventRow[], started: number): Promise<void> {
  const { job, target } = run;
  for (const event of events) {
    if (job.signal?.aborted || Date.now() - started > RUN_BUDGET_MS) {
      run.outcome = 'continued';
      return;
    }
    if (!destinationWants(target.config, event.provider, event.status)) {
      run.delivered = event.sequence;
      continue;
    }
    const startedAt = performance.now();
    const result = await postSigned(target, event, deps.clock(), job.signal);
    if (result.kind !== 'delivered') {
      run.failure = { result, startedAt, probing: run.probing };
      return;
    }
    run.delivered = event.sequence;
    run.lastStatus = result.status;
    deps.metrics?.delivered(job.data.destination, (Date.now() - event.createdAt.getTime()) / 1000);
    if (run.probing) {
      run.probing = false;
      run.probeAnswered = true;
    }
  }
}

/** One statement for every lane that moved on; a lane another run is already past stops here. A probe's 2xx ends its destination's backoff. */
async function recordProgress(deps: DeliveryDeps, runs: readonly LaneRun[]): Promise<void> {
  const moved = runs.filter((run) => run.delivered > run.marked);
  const marked = await markLanesDelivered(
    deps.sql,
    moved.map((run) => ({ destination: run.job.data.destination, paymentId: run.job.data.paymentId, deliveredSequence: run.delivered, status: run.lastStatus })),
  );
  for (const run of moved) {
    if (marked.has(laneKey(run.job.data.destination, run.job.data.paymentId))) run.marked = run.delivered;
    else run.outcome = 'overtaken';
  }
  const resumed = new Set(runs.filter((run) => run.probeAnswered && run.outcome !== 'overtaken').map((run) => run.job.data.destination));
  for (const run of runs) run.probeAnswered = false;
  for (const destination of resumed) await resumeDestination(deps, destination);
}
