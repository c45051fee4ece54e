import type { IngestPressure } from '../inbox/ingest-pressure.ts';
import type { IngestFirstMetrics } from '../observability/metrics.ts';

export interface IngestFirstOptions {
  /** The receiver of this process, as the group commit measures it (src/inbox/ingest-pressure.ts). */
  pressure: IngestPressure;
  /** Most events applied in one transaction while yielding. */
  sliceSize: number;
  /** The wait before each slice while yielding, and how often the pressure is looked at again. */
  pauseMs: number;
  /**
   * Longest one fetched batch may spend waiting. Its jobs are active all along (pg-boss keeps their
   * heartbeat while the handler runs, but not their expiry), so this stays far below the expiry;
   * past it the rest of the batch is applied at once, pressure or not. Under pressure that never
   * lifts the backlog still drains: at least a batch per worker per this long.
   */
  maxHoldMs: number;
  metrics?: IngestFirstMetrics;
  /** Milliseconds on a monotonic clock. */
  now: () => number;
  /** Resolves after `ms`, or at once when `signal` aborts (shutdown): it never rejects. */
  sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** Applies a fetched batch through `applySlice`, whole when ingest is quiet, in paced slices while it is not. */
export interface IngestFirstApplier {
  apply<T, R>(items: readonly T[], applySlice: (slice: T[]) => Promise<R[]>, signal?: AbortSignal): Promise<R[]>;
}

/**
 * Ingest first: while the receiver of this process is under pressure, its workers give it the CPU
 * and PostgreSQL back — a fetched batch is applied in slices of `sliceSize` (shorter transactions,
 * shorter stretches of JavaScript between two acks), each after a pause, and one slice at a time
 * across all the workers of the process (fewer in flight). When the pressure lifts, whatever is
 * left of the batch is applied at once, and the next fetch gets the full batch size again.
 *
 * pg-boss fixes a worker's batch size when it is registered, so the yielding happens after the
 * fetch; `maxHoldMs` bounds what that costs the fetched jobs.
 */
export function createIngestFirstApplier(options: IngestFirstOptions): IngestFirstApplier {
  let slicesInFlight = 0;
  const yielding = (deadline: number, signal: AbortSignal | undefined) =>
    options.pressure.underPressure() && options.now() < deadline && !signal?.aborted;

  /** At least one pause (the point is to leave the receiver the CPU), then while another worker's slice runs. */
  async function waitForTurn(deadline: number, signal: AbortSignal | undefined): Promise<void> {
    let paused = false;
    while (yielding(deadline, signal) && (!paused || slicesInFlight > 0)) {
      const ms = Math.min(options.pauseMs, deadline - options.now());
      await options.sleep(ms, signal);
      options.metrics?.paused(ms / 1000);
      paused = true;
    }
  }

  return {
    async apply(items, applySlice, signal) {
      const deadline = options.now() + options.maxHoldMs;
      const results: Awaited<ReturnType<typeof applySlice>> = [];
      let start = 0;
      while (start < items.length) {
        await waitForTurn(deadline, signal);
        const mode = yielding(deadline, signal) ? 'yielding' : 'full';
        const end = mode === 'yielding' ? start + options.sliceSize : items.length;
        const slice = items.slice(start, end);
        slicesInFlight += 1;
        try {
          results.push(...(await applySlice(slice)));
        } finally {
          slicesInFlight -= 1;
        }
        options.metrics?.applied(mode, slice.length);
        start = end;
      }
      return results;
    },
  };
}
