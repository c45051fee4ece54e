import type { IngestPressure } from '../inbox/ingest-pressure.ts';
import type { IngestFirstApplyMode, IngestFirstMetrics } from './metrics.ts';

export interface IngestFirstOptions {
  /** The receiver of this process, as the group commit measures it (src/inbox/ingest-pressure.ts). */
  pressure: IngestPressure;
  /** Most events applied in one transaction while yielding, on top of what the workers owe the receiver's pace. */
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
 * and PostgreSQL back — a fetched batch is applied in slices (shorter transactions, shorter
 * stretches of JavaScript between two acks), each after a pause, and one slice at a time across all
 * the workers of the process (fewer in flight). When the pressure lifts, whatever is left of the
 * batch is applied at once, and the next fetch gets the full batch size again.
 *
 * How much a slice carries depends on what the pressure is:
 * - saturated (webhook requests queue up on average): `sliceSize`, nothing more. The receiver is behind,
 *   so every spare cycle is its; what it takes in meanwhile goes into the backlog, and is owed.
 * - slow acks while the receiver keeps up: `sliceSize` plus every event owed, that is, committed
 *   by the receiver since the last slice or while it was saturated. Paced slices alone would fall
 *   behind a steady stream (10 events per 50 ms is 200 a second): the backlog would grow for as
 *   long as the traffic lasts and payments would never catch up. Should keeping pace put the
 *   receiver behind, its queue says so and it is saturated again; the backlog drains by the bare
 *   slices on top.
 *
 * pg-boss fixes a worker's batch size when it is registered, so the yielding happens after the
 * fetch; `maxHoldMs` bounds what that costs the fetched jobs.
 */
export function createIngestFirstApplier(options: IngestFirstOptions): IngestFirstApplier {
  let slicesInFlight = 0;
  /** Events the receiver committed while under pressure that no slice has matched yet. */
  let owed = 0;
  let counted = options.pressure.committedEvents();

  /** The receiver's level for a batch held since `deadline`'s start: quiet once the batch has waited enough, or on shutdown. */
  function levelNow(deadline: number, signal: AbortSignal | undefined) {
    const level = options.pressure.level();
    const committed = options.pressure.committedEvents();
    // Whole batches keep pace by themselves: once the receiver is quiet nothing is owed. What it
    // takes in while saturated is owed too, paid once it is only slow: a spell of saturation lasts
    // at least INGEST_QUIET_MS, and a steady stream must not fall that far behind for each one.
    owed = level === 'quiet' ? 0 : owed + (committed - counted);
    counted = committed;
    return options.now() < deadline && !signal?.aborted ? level : 'quiet';
  }

  /** At least one pause (the point is to leave the receiver the CPU), then while another worker's slice runs. */
  async function waitForTurn(deadline: number, signal: AbortSignal | undefined): Promise<void> {
    let paused = false;
    while (levelNow(deadline, signal) !== 'quiet' && (!paused || slicesInFlight > 0)) {
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
        const level = levelNow(deadline, signal);
        const mode: IngestFirstApplyMode = level === 'quiet' ? 'full' : level === 'slow' ? 'keeping_pace' : 'yielding';
        const end = mode === 'full' ? items.length : Math.min(items.length, start + options.sliceSize + (mode === 'keeping_pace' ? owed : 0));
        owed = Math.max(0, owed - Math.max(0, end - start - options.sliceSize));
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
