/**
 * Whether a request that finds the transaction slot free waits a moment for company before it
 * commits. A batch costs a statement, a commit and an fsync whatever it carries, so at a steady
 * few hundred to a thousand requests a second, where batches of one or two leave the slot idle
 * most of the time, a few milliseconds of waiting cut the CPU a request costs the service and
 * PostgreSQL by about a third (bench/README.md#where-the-time-goes).
 *
 * Waiting must not cost where it buys nothing, so it is adaptive three ways:
 * - it ends as soon as requests stop arriving (no arrival for about twice the usual gap between
 *   two): senders that each wait for their answer (a fixed set of connections) have all sent by
 *   then, and waiting longer would only idle the slot;
 * - it is kept only while it pays (on average at least one request joins a wait), and otherwise
 *   tried once per probe interval, so a sequential sender pays it once a second, not per request;
 * - a batch goes at once when it has company (COMPANY requests), and no request waits longer
 *   than `lingerMs` in all.
 */
export interface CommitLinger {
  /** Every request, as it joins the queue. */
  arrived(): void;
  /** The slot is free and requests wait: how many ms to wait for more before committing (0: now). */
  begin(oldestQueuedAt: number, queued: number): number;
  /** The wait's timer fired, or a request joined it: how many ms more (0: commit now). */
  extend(oldestQueuedAt: number, queued: number): number;
  /** The waited batch leaves with `size` requests, `queuedWhenBegan` of them there when the wait began. */
  ended(queuedWhenBegan: number, size: number): void;
}

export interface CommitLingerOptions {
  /** The longest a request waits for company, from its arrival. 0: never. */
  lingerMs: number;
  /** A batch this large goes at once. */
  maxBatchSize: number;
  /** Milliseconds (the service clock's, e.g. performance.now). */
  now: () => number;
}

/**
 * A batch this large has company enough: it goes at once. Under heavier traffic, whatever arrived
 * while the batch ahead was in flight is at least this, so waiting would only idle the slot.
 */
const COMPANY = 8;
/** Weight of the latest sample in the running averages (joiners per wait, gap between arrivals). */
const SMOOTHING = 0.2;
/** A wait pays when, on average, at least this many requests join it: the batch doubles. */
const JOINERS_THAT_PAY = 1;
/** While waits do not pay, one is still tried this often, to notice traffic that changed. */
const PROBE_INTERVAL_MS = 1000;
/** Node's timers do not resolve below a millisecond. */
const TIMER_RESOLUTION_MS = 1;

export const NO_COMMIT_LINGER: CommitLinger = { arrived: () => {}, begin: () => 0, extend: () => 0, ended: () => {} };

export function createCommitLinger(options: CommitLingerOptions): CommitLinger {
  if (options.lingerMs <= 0) return NO_COMMIT_LINGER;
  // Hopeful at first: the first wait is tried, and its outcome decides the next.
  let joiners = JOINERS_THAT_PAY;
  let lastTriedAt = Number.NEGATIVE_INFINITY;
  let lastArrivalAt = Number.NEGATIVE_INFINITY;
  let meanGapMs = options.lingerMs;

  /** Requests are still coming if the last one came within about twice the usual gap. */
  function quietFor(now: number): number {
    const patience = Math.min(options.lingerMs, Math.max(TIMER_RESOLUTION_MS, 2 * meanGapMs));
    return patience - (now - lastArrivalAt);
  }

  function remaining(oldestQueuedAt: number, queued: number, now: number): number {
    if (queued >= Math.min(COMPANY, options.maxBatchSize)) return 0;
    const wait = Math.min(options.lingerMs - (now - oldestQueuedAt), quietFor(now));
    return wait < TIMER_RESOLUTION_MS / 2 ? 0 : wait;
  }

  return {
    arrived() {
      const now = options.now();
      // An idle spell is not a gap between requests: capped, it cannot make the patience long.
      meanGapMs = (1 - SMOOTHING) * meanGapMs + SMOOTHING * Math.min(now - lastArrivalAt, options.lingerMs);
      lastArrivalAt = now;
    },
    begin(oldestQueuedAt, queued) {
      const now = options.now();
      if (joiners < JOINERS_THAT_PAY && now - lastTriedAt < PROBE_INTERVAL_MS) return 0;
      const wait = remaining(oldestQueuedAt, queued, now);
      if (wait > 0) lastTriedAt = now;
      return wait;
    },
    extend(oldestQueuedAt, queued) {
      return remaining(oldestQueuedAt, queued, options.now());
    },
    ended(queuedWhenBegan, size) {
      joiners = (1 - SMOOTHING) * joiners + SMOOTHING * Math.max(0, size - queuedWhenBegan);
    },
  };
}
