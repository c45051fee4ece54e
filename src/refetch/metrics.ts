import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The refetch layer's metrics: the hooks it calls (injected and optional: `noRefetchMetrics`
 * without a registry) and their prom-client declaration, composed into the service's registry by
 * src/observability/metrics.ts (`metrics.refetch`).
 */
/** `retry_after` and `breaker_open`: not sent (a gateway's Retry-After has not passed; the breaker is open). */
export type RefetchOutcome = 'ok' | 'not_found' | 'rate_limited' | 'error' | 'breaker_open' | 'retry_after';
export type BreakerState = 'closed' | 'half_open' | 'open';

export interface RefetchMetrics {
  /** One charge re-read (one or two HTTP calls), by how it ended; `seconds` includes rate-limit waiting. */
  call(provider: string, outcome: RefetchOutcome, seconds: number): void;
  breakerState(provider: string, state: BreakerState): void;
  /** An account's own breaker (one per account read on behalf of) moved from one state to another. */
  accountBreakerChanged(provider: string, from: BreakerState, to: BreakerState): void;
}

export const noRefetchMetrics: RefetchMetrics = {
  call() {},
  breakerState() {},
  accountBreakerChanged() {},
};

const REFETCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const BREAKER_STATE_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

export function declareRefetchMetrics(registers: Registry[]): RefetchMetrics {
  const refetchCalls = new Counter({
    name: 'inbox_refetch_calls_total',
    help: "Gateway API calls that fetch a resource's true state, by provider and outcome.",
    labelNames: ['provider', 'outcome'],
    registers,
  });
  const refetchDuration = new Histogram({
    name: 'inbox_refetch_duration_seconds',
    help: 'Duration of gateway API refetch calls.',
    labelNames: ['provider'],
    buckets: REFETCH_BUCKETS,
    registers,
  });
  const breaker = new Gauge({
    name: 'inbox_refetch_breaker_state',
    help: 'Refetch circuit breaker per provider: 0 closed, 1 half-open, 2 open.',
    labelNames: ['provider'],
    registers,
  });
  // A count per state, not a series per account: a platform may read on behalf of thousands. Closed
  // ones are not counted (every account's breaker starts closed, and a closed one may be forgotten).
  const accountBreakers = new Gauge({
    name: 'inbox_refetch_account_breakers',
    help: "Accounts read on behalf of whose own refetch breaker is not closed, per provider and state (half_open, open); this instance's.",
    labelNames: ['provider', 'state'],
    registers,
  });
  return {
    call(provider, outcome, seconds) {
      refetchCalls.inc({ provider, outcome });
      if (outcome !== 'breaker_open' && outcome !== 'retry_after') refetchDuration.observe({ provider }, seconds);
    },
    breakerState: (provider, state) => breaker.set({ provider }, BREAKER_STATE_VALUE[state]),
    accountBreakerChanged(provider, from, to) {
      if (from === to) return;
      if (from !== 'closed') accountBreakers.dec({ provider, state: from });
      if (to !== 'closed') accountBreakers.inc({ provider, state: to });
    },
  };
}
