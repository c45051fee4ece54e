/**
 * The refetch layer's metrics hooks, injected and optional. The shape is the one
 * src/observability/metrics.ts implements with prom-client (`metrics.refetch`), declared here so
 * this layer depends on no metrics library.
 */
/** `retry_after` and `breaker_open`: not sent (a gateway's Retry-After has not passed; the breaker is open). */
export type RefetchOutcome = 'ok' | 'not_found' | 'rate_limited' | 'error' | 'breaker_open' | 'retry_after';
export type BreakerState = 'closed' | 'half_open' | 'open';

export interface RefetchMetrics {
  /** One charge re-read (one or two HTTP calls), by how it ended; `seconds` includes rate-limit waiting. */
  call(provider: string, outcome: RefetchOutcome, seconds: number): void;
  breakerState(provider: string, state: BreakerState): void;
}

export const noRefetchMetrics: RefetchMetrics = {
  call() {},
  breakerState() {},
};
