/**
 * How the receiver is doing, as the workers of the same process see it:
 * - `quiet`: no sign of pressure within the quiet period;
 * - `slow`: commits waited past the threshold, but the receiver keeps up with what arrives;
 * - `saturated`: requests queue up for a transaction slot on average, not only in a spike: the
 *   receiver is behind what arrives.
 */
export type IngestPressureLevel = 'quiet' | 'slow' | 'saturated';

/**
 * What the workers of the same process read before they apply events (src/processing). Narrow on
 * purpose: they learn how the receiver is doing and how much it took in, not how it is measured.
 */
export interface IngestPressure {
  level(): IngestPressureLevel;
  /** New events this receiver has committed so far, a running count: the pace the workers keep while acks are only slow. */
  committedEvents(): number;
}

/** A process without a receiver, or with ingest first off: the workers never yield. */
export const NO_INGEST_PRESSURE: IngestPressure = { level: () => 'quiet', committedEvents: () => 0 };

/** What the group commit tells the meter (group-commit.ts). */
export interface IngestPressureMeter extends IngestPressure {
  /** A request joined the queue; `depth` requests now wait for a transaction slot. */
  requestQueued(depth: number): void;
  /** A batch committed `newEvents` events; its oldest request waited `latencyMs` from ingest() to COMMIT. */
  batchCommitted(latencyMs: number, newEvents: number): void;
}

export interface IngestPressureOptions {
  /** A batch whose oldest request waited longer than this for its COMMIT is a sign of slow acks. */
  ackLatencyMs: number;
  /** On average more requests than this waiting for a transaction slot (as each arrives) is a sign of saturation. */
  queueDepth: number;
  /** A sign lasts this long after it was seen. */
  quietMs: number;
  /** Milliseconds (the service clock's). */
  now: () => number;
}

/**
 * The running mean's weight of one request's depth: about the last 500 requests (half a second
 * at 1,000 a second). A stall of a few tens of milliseconds queues up a few dozen requests and
 * barely moves it; a receiver that stays behind moves it within a fraction of a second.
 */
const DEPTH_SMOOTHING = 1 / 512;

/**
 * A level lasts `quietMs` after its last sign (saturation wins while both are recent): a slow
 * commit, or a queue whose mean depth grew past its threshold. By Little's law that mean is the
 * arrival rate times the wait for a slot, so it tells a receiver behind its arrivals (64 senders
 * at full speed: tens) from one that only had a stall (1,000 a second, ~5 ms each: a few).
 * Both are what the workers' CPU and connections take from a request in this process (they
 * share the event loop, the cores and PostgreSQL with the group commit). Holding a level for a
 * quiet period keeps the workers from taking the CPU back between two bursts, which is when the
 * next request would pay for it. O(1) per request: a timestamp, a count and a mean, no window.
 */
export function createIngestPressureMeter(options: IngestPressureOptions): IngestPressureMeter {
  let lastSlowAt = Number.NEGATIVE_INFINITY;
  let lastSaturatedAt = Number.NEGATIVE_INFINITY;
  let meanDepth = 0;
  let committed = 0;
  const recent = (at: number) => options.now() - at < options.quietMs;
  return {
    requestQueued(depth) {
      meanDepth += (depth - meanDepth) * DEPTH_SMOOTHING;
      if (meanDepth > options.queueDepth) lastSaturatedAt = options.now();
    },
    batchCommitted(latencyMs, newEvents) {
      committed += newEvents;
      if (latencyMs > options.ackLatencyMs || options.ackLatencyMs === 0) lastSlowAt = options.now();
    },
    level: () => (recent(lastSaturatedAt) ? 'saturated' : recent(lastSlowAt) ? 'slow' : 'quiet'),
    committedEvents: () => committed,
  };
}
