import { setTimeout as delay } from 'node:timers/promises';
import type { PaymentEventRow } from '../domain/payments/schema.ts';
import { type LaneRunOutcome, type DeliveryDeps, type DeliveryTarget, handleFailure, laneHeldBack, postSigned, resumeDestination } from './deliver-lane.ts';
import { type DeliveryJobData, laneKey } from './deliveries-queue.ts';
import { destinationWants, enqueueLaneJobs } from './enqueue-deliveries.ts';
import { type LaneState, markLanesDelivered, readLaneStates, readLanesEvents } from './sql/lane-batch.ts';
import type { PostResult } from './post-event.ts';

export interface LaneJob {
  data: DeliveryJobData;
  /** The job's: aborted when pg-boss gives up on it (expiry, shutdown). */
  signal?: AbortSignal;
}

const EVENTS_PER_READ = 50;
/** A run starts no POST after this long; a new job carries on, so a run stays far inside its expiry. */
const RUN_BUDGET_MS = 60_000;
/**
 * How long a round waits for its other lanes once one is done. Healthy consumers answer a batch's
 * POSTs within about the same time; a lane still waiting after this is the consumer's slow answer
 * or a hang that only the timeout (15 s by default) ends.
 */
const STRAGGLER_PATIENCE_MS = 1_000;

/** One lane's run inside a batch. */
interface LaneRun {
  job: LaneJob;
  target: DeliveryTarget;
  state: LaneState;
  /** How far it got (2xx, or not for this destination), and how far the lane row says. */
  delivered: number;
  marked: number;
  /** The last event answered 2xx: what the next one sent follows. */
  answered: number;
  lastStatus: number | null;
  /** This run's first POST is the destination's probe after a backoff; a 2xx ends the backoff. */
  probing: boolean;
  probeAnswered: boolean;
  failure?: { result: Exclude<PostResult, { kind: 'delivered' }>; startedAt: number; probing: boolean };
  outcome?: LaneRunOutcome;
  /** Its last read returned all it had left (fewer than EVENTS_PER_READ). */
  readAll?: boolean;
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
export async function deliverLanes<J extends LaneJob>(
  deps: DeliveryDeps,
  jobs: readonly J[],
  settleEarly?: (ended: readonly EndedLane<J>[]) => Promise<void>,
): Promise<LaneRunOutcome[]> {
  const states = await readLaneStates(
    deps.sql,
    jobs.map((job) => job.data),
  );
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
      const { deliveredSequence, answeredSequence } = state;
      runs.push({
        job,
        target,
        state,
        delivered: deliveredSequence,
        marked: deliveredSequence,
        answered: answeredSequence,
        lastStatus: null,
        probing: state.destinationBackoffTrips > 0,
        probeAnswered: false,
      });
    }),
  );
  const batch: BatchProgress = {
    groupsSending: 1,
    ended: [...outcomes].map(([job, outcome]) => ({ job, outcome })),
    ...(settleEarly && { settleEarly: settleEarly as (ended: readonly EndedLane<LaneJob>[]) => Promise<void> }),
  };
  await sendInRounds(deps, batch, runs, deps.timers.now());
  for (const run of runs) outcomes.set(run.job, run.outcome!);
  return jobs.map((job) => outcomes.get(job)!);
}

/** A lane's job and how its run ended. */
export interface EndedLane<J extends LaneJob> {
  job: J;
  outcome: LaneRunOutcome;
}

/** A batch's lanes as they end, while some of its lanes are still sending. */
interface BatchProgress {
  /** Groups of this batch's lanes still sending (a straggler becomes a group of its own). */
  groupsSending: number;
  /** Lanes that ended and were not yet passed to settleEarly. */
  ended: EndedLane<LaneJob>[];
  settleEarly?: (ended: readonly EndedLane<LaneJob>[]) => Promise<void>;
}

/**
 * Rounds of read → send → record, until every lane has sent all it had, failed, or stopped. A round
 * waits for its slowest lane only so long (STRAGGLER_PATIENCE_MS after its first lane is done): a
 * lane whose consumer is slow to answer, or hangs until the timeout, goes on as a group of its own,
 * and while it does, lanes that end are settled at once (their jobs complete, so their payments'
 * next events are not held behind a stranger's consumer).
 */
async function sendInRounds(deps: DeliveryDeps, batch: BatchProgress, runs: LaneRun[], started: number, sending?: Promise<void>[]): Promise<void> {
  const stragglers: Promise<void>[] = [];
  let active = runs;
  let inFlight = sending;
  try {
    while (active.length > 0) {
      if (!inFlight) {
        const events = await readLanesEvents(
          deps.db,
          active.map((run) => ({ paymentId: run.job.data.paymentId, afterSequence: run.delivered })),
          EVENTS_PER_READ,
        );
        inFlight = active.map((run, i) => {
          run.readAll = events[i]!.length < EVENTS_PER_READ;
          return sendEvents(deps, run, events[i]!, started);
        });
      }
      const done = await doneWithinPatience(inFlight);
      const slow = active.filter((_, i) => !done[i]);
      if (slow.length > 0) {
        batch.groupsSending += 1;
        stragglers.push(
          sendInRounds(
            deps,
            batch,
            slow,
            started,
            inFlight.filter((_, i) => !done[i]),
          ),
        );
      }
      const answered = active.filter((_, i) => done[i]);
      inFlight = undefined;
      active = await endRound(deps, answered);
      for (const run of answered) if (run.outcome !== undefined) batch.ended.push({ job: run.job, outcome: run.outcome });
      await settleEnded(batch);
    }
  } finally {
    batch.groupsSending -= 1;
  }
  await Promise.all(stragglers);
}

/** Records how far a round's lanes got and decides which have ended; returns those that go on. */
async function endRound(deps: DeliveryDeps, runs: LaneRun[]): Promise<LaneRun[]> {
  await recordProgress(deps, runs);
  const more: LaneRun[] = [];
  const continued: DeliveryJobData[] = [];
  for (const run of runs) {
    if (run.outcome === 'continued' && !run.job.signal?.aborted) continued.push(run.job.data);
    if (run.outcome !== undefined) continue;
    if (run.failure) {
      // Moved on in this run: the failure is the new head event's first.
      const movedOn = run.delivered > run.state.deliveredSequence;
      const state = { ...run.state, deliveredSequence: run.delivered, answeredSequence: run.answered, ...(movedOn && { attempts: 0, throttles: 0 }) };
      run.outcome = await handleFailure(deps, { job: run.job.data, target: run.target, state, ...run.failure });
    } else if (!run.readAll) {
      more.push(run);
    } else {
      // A short read was the whole lane: an event committed since has a job of its own queued.
      run.outcome = run.delivered === run.state.deliveredSequence ? 'nothing_to_send' : 'delivered';
    }
  }
  // Out of time: a new job carries on from where the lane row says.
  await enqueueLaneJobs(deps.boss, deps.db, continued);
  return more;
}

/** While another group of the batch still sends, what has ended is settled now rather than with the batch. */
async function settleEnded(batch: BatchProgress): Promise<void> {
  if (batch.groupsSending < 2 || !batch.settleEarly || batch.ended.length === 0) return;
  const ended = batch.ended;
  batch.ended = [];
  await batch.settleEarly(ended);
}

/**
 * Which sends are done: all of them, or those done STRAGGLER_PATIENCE_MS after the first one was
 * (when all are slow alike nothing is left behind: a slow destination is not a straggler).
 */
async function doneWithinPatience(sends: readonly Promise<void>[]): Promise<boolean[]> {
  const done = sends.map(() => false);
  const all = Promise.all(sends.map((send, i) => send.then(() => void (done[i] = true))));
  const patienceOver = new AbortController();
  const patience = Promise.race(sends).then(() => delay(STRAGGLER_PATIENCE_MS, undefined, { signal: patienceOver.signal }).catch(() => {}));
  await Promise.race([all, patience]);
  patienceOver.abort();
  return [...done];
}

/** The lane's events in order, until one fails, the job is aborted, or the run's time is up. */
async function sendEvents(deps: DeliveryDeps, run: LaneRun, events: readonly PaymentEventRow[], started: number): Promise<void> {
  const { job, target } = run;
  for (const event of events) {
    if (job.signal?.aborted || deps.timers.now() - started > RUN_BUDGET_MS) {
      run.outcome = 'continued';
      return;
    }
    if (!destinationWants(target.config, event)) {
      run.delivered = event.sequence;
      continue;
    }
    const startedAt = performance.now();
    const result = await postSigned(deps, target, { event, followsSequence: run.answered }, job.signal);
    if (result.kind !== 'delivered') {
      run.failure = { result, startedAt, probing: run.probing };
      return;
    }
    run.delivered = event.sequence;
    run.answered = event.sequence;
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
    moved.map((run) => ({
      destination: run.job.data.destination,
      paymentId: run.job.data.paymentId,
      deliveredSequence: run.delivered,
      answeredSequence: run.answered,
      status: run.lastStatus,
    })),
  );
  for (const run of moved) {
    if (marked.has(laneKey(run.job.data.destination, run.job.data.paymentId))) run.marked = run.delivered;
    else run.outcome = 'overtaken';
  }
  const resumed = new Set(runs.filter((run) => run.probeAnswered && run.outcome !== 'overtaken').map((run) => run.job.data.destination));
  for (const run of runs) run.probeAnswered = false;
  for (const destination of resumed) await resumeDestination(deps, destination);
}
