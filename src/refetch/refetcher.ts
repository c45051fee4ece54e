import { BrokenCircuitError, CircuitState, ConsecutiveBreaker, circuitBreaker, handleWhen } from 'cockatiel';
import pThrottle from 'p-throttle';
import type { ChargeSnapshot, GatewayGet } from '../gateways/shared/gateway-api.ts';
import { GatewayResponseShapeError } from '../gateways/shared/gateway-api.ts';
import {
  AccountDeauthorizedError,
  BreakerOpenError,
  GatewayRejectedError,
  GatewayRetryAfterError,
  GatewayUnavailableError,
  UnknownAccountError,
} from './errors.ts';
import { createGatewayGet } from './gateway-http.ts';
import { type BreakerState, type RefetchMetrics, type RefetchOutcome, noRefetchMetrics } from './metrics.ts';
import type { GatewayApiTarget } from './settings.ts';

export interface RefetcherDeps {
  /** One entry per provider that has a gateway API configured. */
  targets: readonly GatewayApiTarget[];
  /** Stamps `observedAt`; injected like every clock here. */
  clock: () => Date;
  metrics?: RefetchMetrics;
  fetch?: typeof fetch;
  /**
   * Whether the platform may still read an account (gateway_account_access): asked before any call
   * made on an account's behalf. Absent: every account may be read.
   */
  accountAccess?: AccountAccess;
  /**
   * How many accounts' clients are kept (default 10,000): a platform may have far more accounts
   * than are active at once. Past it, the least recently used client whose breaker is closed is
   * dropped (its rate-limit window with it); one whose breaker is open or half-open is kept.
   */
  maxAccountClients?: number;
}

export interface AccountAccess {
  isDeauthorized(provider: string, account: string): Promise<boolean>;
}

export interface Refetcher {
  /** Whether `provider` has a gateway API to re-read from. */
  has(provider: string): boolean;
  /**
   * The charge as the gateway says it is now. Throws GatewayUnavailableError (retry later),
   * GatewayRetryAfterError (retry after `retryAt`, the gateway's Retry-After), BreakerOpenError
   * (retry after `halfOpensAt`) or GatewayRejectedError (a human must look).
   * `signal` (the job's) aborts the HTTP call, or a wait behind the rate limit; its reason is
   * thrown as it is. A half-open breaker's trial call is only stopped being waited for: it runs on,
   * and its answer decides the breaker.
   */
  fetchCharge(provider: string, chargeId: string, signal?: AbortSignal, account?: string | null): Promise<ChargeSnapshot>;
  /**
   * Any other GET of the provider's API (a page of its event list: inboxctl backfill), through the
   * same rate limit, circuit breaker, timeout and metrics as fetchCharge; the parsed JSON answer.
   */
  get(provider: string, path: string, signal?: AbortSignal, account?: string | null): Promise<unknown>;
  /** The breaker of the provider's own reads, or of one account's (a `connect` provider's, or an account with its own API key). */
  breakerState(provider: string, account?: string | null): BreakerState;
}

/** What processing needs of a refetcher: re-reading a charge (a dry run answers it from stored snapshots). */
export type ChargeRefetcher = Pick<Refetcher, 'has' | 'fetchCharge' | 'breakerState'>;

const STATE_NAMES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Open]: 'open',
  [CircuitState.Isolated]: 'open',
};

/**
 * p-throttle's strict mode holds `limit` calls in every rolling `interval`, not just per fixed
 * window (a windowed limiter lets 2 × limit through around a window edge). Rates below one per
 * second become one call per 1/rate seconds.
 */
function rateLimiter(ratePerSecond: number) {
  return Number.isInteger(ratePerSecond)
    ? pThrottle({ limit: ratePerSecond, interval: 1000, strict: true })
    : pThrottle({ limit: 1, interval: Math.ceil(1000 / ratePerSecond), strict: true });
}

/**
 * The promise's outcome, or the signal's reason as soon as it aborts: the caller stops waiting,
 * and the promise goes on to settle unobserved.
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function outcomeOf(error: unknown): RefetchOutcome {
  if (error instanceof BreakerOpenError) return 'breaker_open';
  if (error instanceof GatewayRetryAfterError && error.status === undefined) return 'retry_after';
  if ((error instanceof GatewayUnavailableError || error instanceof GatewayRetryAfterError) && error.status === 429) return 'rate_limited';
  if (error instanceof GatewayRejectedError && error.status === 404) return 'not_found';
  return 'error';
}

/**
 * One client per (provider, account read on behalf of): its own rate limit, Retry-After and
 * breaker, so one account's failures or throttling never hold back another's. `account` undefined:
 * the provider's own reads. An account with an API key of its own (Asaas subaccounts,
 * target.accountKeys) is read with that key; a `connect` provider's with the platform's key and
 * the gateway's accountHeaders.
 */
function createProviderClient(target: GatewayApiTarget, deps: RefetcherDeps, metrics: RefetchMetrics, account?: string) {
  const { provider } = target;
  const key = (account === undefined ? undefined : target.accountKeys?.get(account)) ?? target.key;
  // The provider's own client reports its breaker's state; an account's reports its moves, counted
  // per state (the accounts are many: no series each).
  let reportedState: BreakerState = 'closed';
  const reportBreaker = (state: BreakerState) => {
    if (account === undefined) metrics.breakerState(provider, state);
    else metrics.accountBreakerChanged(provider, reportedState, state);
    reportedState = state;
  };
  const get = createGatewayGet({
    provider,
    baseUrl: target.baseUrl,
    headers: { ...target.gateway.authHeaders(key), ...(account !== undefined && target.connect ? target.gateway.accountHeaders?.(account) : {}) },
    apiKey: key,
    timeoutMs: target.timeoutMs,
    clock: deps.clock,
    fetch: deps.fetch,
  });
  // A Retry-After is about the account (the key), not one charge: until it passes no call of this
  // provider is sent.
  let retryAtMs = 0;
  function throwIfHeldBack(): void {
    if (deps.clock().getTime() >= retryAtMs) return;
    const retryAt = new Date(retryAtMs);
    throw new GatewayRetryAfterError(
      provider,
      `The ${provider} API asked (Retry-After) not to be called before ${retryAt.toISOString()}; this call was not sent.`,
      { retryAt },
    );
  }
  // Checked again as each call leaves the rate limiter: calls queued there when the answer came
  // (and a Stripe dispute's second call) are held back too.
  async function politeGet(path: string, signal?: AbortSignal): Promise<unknown> {
    throwIfHeldBack();
    try {
      return await get(path, signal);
    } catch (error) {
      if (error instanceof GatewayRetryAfterError) retryAtMs = Math.max(retryAtMs, error.retryAt.getTime());
      throw error;
    }
  }
  // Every HTTP call takes a token, so a mapping that needs two calls (a Stripe dispute) pays two.
  const throttledGet = rateLimiter(target.ratePerSecond)(politeGet);
  // Only "the gateway is not answering" opens the breaker; a 404 for one charge is an answer, and a
  // call held back for a Retry-After was never asked.
  const answeredUnavailable = (error: unknown) =>
    error instanceof GatewayUnavailableError || (error instanceof GatewayRetryAfterError && error.status !== undefined);
  const breaker = circuitBreaker(handleWhen(answeredUnavailable), {
    halfOpenAfter: target.breaker.halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(target.breaker.consecutiveFailures),
  });
  // cockatiel measures the open period with Date.now(), so the half-open time uses it too.
  let openedAtMs = 0;
  breaker.onBreak(() => {
    openedAtMs = Date.now();
  });
  breaker.onStateChange((state) => reportBreaker(STATE_NAMES[state]));
  reportBreaker('closed');

  async function readCharge(chargeId: string, signal: AbortSignal | undefined): Promise<ChargeSnapshot> {
    const observedAt = deps.clock();
    const gatewayGet: GatewayGet = (path) => throttledGet(path, signal);
    try {
      const state = await target.gateway.readCharge(chargeId, gatewayGet, target.settings);
      return { ...state, observedAt };
    } catch (error) {
      if (error instanceof GatewayResponseShapeError) throw new GatewayRejectedError(provider, error.message, { status: 200, cause: error });
      throw error;
    }
  }

  /**
   * One guarded call: the breaker decides whether it is sent, and the metrics count its outcome.
   * A half-open trial does not get the caller's signal: cockatiel takes a trial that ends in an
   * error it does not count as a failure, an abort included, for a success and closes the breaker,
   * yet a job stopped by us says nothing of the gateway. So the trial runs on to the gateway's
   * answer or `timeoutMs`, which decides, while the stopped caller stops waiting for it at once.
   */
  async function guarded<T>(work: (signal: AbortSignal | undefined) => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    const started = performance.now();
    try {
      // Before the breaker: a half-open breaker would take a call held back as its trial's success.
      throwIfHeldBack();
      const execution = breaker.execute(() => work(breaker.state === CircuitState.HalfOpen ? undefined : signal));
      const answer = await untilAborted(execution, signal);
      metrics.call(provider, 'ok', (performance.now() - started) / 1000);
      return answer;
    } catch (caught) {
      const error =
        caught instanceof BrokenCircuitError
          ? new BreakerOpenError(account === undefined ? provider : `${provider} (account ${account})`, new Date(openedAtMs + target.breaker.halfOpenAfterMs))
          : caught;
      metrics.call(provider, outcomeOf(error), (performance.now() - started) / 1000);
      throw error;
    }
  }

  return {
    breakerState: () => STATE_NAMES[breaker.state],
    fetchCharge: (chargeId: string, signal?: AbortSignal) => guarded((sent) => readCharge(chargeId, sent), signal),
    get: (path: string, signal?: AbortSignal) => guarded((sent) => throttledGet(path, sent), signal),
  };
}

/**
 * Re-reads charges from gateway APIs, one client per provider: a rate limit and a circuit
 * breaker each, both per service instance (N instances send up to N × ratePerSecond). Callers
 * must not hold a database transaction across `fetchCharge`: it can take `timeoutMs` per call
 * plus time queued behind the rate limit.
 */
export function createRefetcher(deps: RefetcherDeps): Refetcher {
  const metrics = deps.metrics ?? noRefetchMetrics;
  const targets = new Map(deps.targets.map((target) => [target.provider, target]));
  const clients = new Map(deps.targets.map((target) => [target.provider, createProviderClient(target, deps, metrics)]));
  // The accounts' clients, made on an account's first read: a connect provider's accounts are
  // whatever the events name, not a list known at start.
  const accountClients = new Map<string, ReturnType<typeof createProviderClient>>();
  /** An account is read on its own behalf for a `connect` provider whose gateway can say so, or with its own key. */
  const onBehalfOf = (target: GatewayApiTarget, account: string | null | undefined): account is string =>
    typeof account === 'string' && ((target.connect === true && target.gateway.accountHeaders !== undefined) || (target.accountKeys?.size ?? 0) > 0);
  function clientFor(provider: string, account?: string | null) {
    const client = clients.get(provider);
    const target = targets.get(provider);
    if (!client || !target) throw new Error(`No gateway API is configured for provider "${provider}"; its events cannot be re-read.`);
    if (!onBehalfOf(target, account)) return client;
    // Never the provider's own key for another account's charge: that account's charges are not
    // there, and a read answering 404 would say so wrongly.
    if (target.accountKeys && !target.connect && !target.accountKeys.has(account)) throw new UnknownAccountError(provider, account);
    const key = `${provider}\u0000${account}`;
    let accountClient = accountClients.get(key);
    // Map order is the recency order: a client read again moves to the end.
    if (accountClient) accountClients.delete(key);
    else {
      dropLeastRecentlyUsed();
      accountClient = createProviderClient(target, deps, metrics, account);
    }
    accountClients.set(key, accountClient);
    return accountClient;
  }
  function dropLeastRecentlyUsed(): void {
    if (accountClients.size < (deps.maxAccountClients ?? 10_000)) return;
    for (const [key, client] of accountClients) {
      if (client.breakerState() !== 'closed') continue;
      accountClients.delete(key);
      return;
    }
  }
  /** No call is made on behalf of an account that deauthorized the platform. */
  async function assertReadable(provider: string, account: string | null | undefined): Promise<void> {
    const target = targets.get(provider);
    if (!target || !onBehalfOf(target, account) || !deps.accountAccess) return;
    if (await deps.accountAccess.isDeauthorized(provider, account)) throw new AccountDeauthorizedError(provider, account);
  }
  return {
    has: (provider) => clients.has(provider),
    fetchCharge: async (provider, chargeId, signal, account) => {
      await assertReadable(provider, account);
      return clientFor(provider, account).fetchCharge(chargeId, signal);
    },
    get: async (provider, path, signal, account) => {
      await assertReadable(provider, account);
      return clientFor(provider, account).get(path, signal);
    },
    breakerState: (provider, account) => clientFor(provider, account).breakerState(),
  };
}
