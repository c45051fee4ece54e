/**
 * What the workers of the same process read before they apply events (src/processing): is the
 * receiver struggling right now? Narrow on purpose: they learn a yes or no, not how it is measured.
 */
export interface IngestPressure {
  underPressure(): boolean;
}

/** A process without a receiver, or with ingest first off: the workers never yield. */
export const NO_INGEST_PRESSURE: IngestPressure = { underPressure: () => false };

/** What the group commit tells the meter (group-commit.ts). */
export interface IngestPressureMeter extends IngestPressure {
  /** A delivery joined the queue; `depth` deliveries now wait for a transaction slot. */
  deliveryQueued(depth: number): void;
  /** A batch committed; its oldest delivery waited `latencyMs` from ingest() to COMMIT. */
  batchCommitted(latencyMs: number): void;
}

export interface IngestPressureOptions {
  /** A batch whose oldest delivery waited longer than this for its COMMIT is a sign of pressure. */
  ackLatencyMs: number;
  /** More deliveries than this waiting for a transaction slot is a sign of pressure. */
  queueDepth: number;
  /** Pressure lasts this long after its last sign. */
  quietMs: number;
  /** Milliseconds (the service clock's). */
  now: () => number;
}

/**
 * Pressure is a sign seen within the last `quietMs`: a slow commit, or a queue that grew past its
 * threshold. Both are what the workers' CPU and connections take from a delivery in this process
 * (they share the event loop, the cores and PostgreSQL with the group commit). Holding it for a
 * quiet period keeps the workers from taking the CPU back between two bursts, which is when the
 * next delivery would pay for it. O(1) per delivery: the hot path stores a timestamp, no window.
 */
export function createIngestPressureMeter(options: IngestPressureOptions): IngestPressureMeter {
  let lastSignAt = Number.NEGATIVE_INFINITY;
  return {
    deliveryQueued(depth) {
      if (depth > options.queueDepth) lastSignAt = options.now();
    },
    batchCommitted(latencyMs) {
      if (latencyMs > options.ackLatencyMs || options.ackLatencyMs === 0) lastSignAt = options.now();
    },
    underPressure: () => options.now() - lastSignAt < options.quietMs,
  };
}
