import { GatewayRetryAfterError, GatewayUnavailableError } from './errors.ts';

/**
 * A page of a gateway's list read by an operator's run (`inboxctl backfill`, `inboxctl
 * reconcile`): a 429 is waited out, as the gateway asked, a few times, instead of ending a run
 * that may be hundreds of pages long. Everything else is thrown as the refetch layer threw it.
 */
export interface PatientGetDeps {
  provider: string;
  /** What the run is called in messages ("more than the 60 s a backfill waits"). */
  operation: string;
  /** A GET of the provider's API through the refetch layer (rate limit, breaker, timeout, key). */
  get(path: string): Promise<unknown>;
  clock: () => Date;
  sleep(ms: number): Promise<void>;
  /** A line of progress (a 429 wait), for stderr. */
  notice(text: string): void;
}

/** A 429 is retried this many times per page, each after its Retry-After; then the run stops (exit 4). */
const MAX_RATE_LIMITED_RETRIES = 5;
/** Waits longer than this are not waited out: the run stops and says when to run it again. */
const MAX_RETRY_AFTER_SECONDS = 60;
const DEFAULT_RETRY_AFTER_SECONDS = 1;

/** A 429, with or without Retry-After; a call the refetcher held back for an earlier 429's Retry-After. */
function rateLimited(error: unknown): error is GatewayUnavailableError | GatewayRetryAfterError {
  if (error instanceof GatewayRetryAfterError) return error.status === 429 || error.status === undefined;
  return error instanceof GatewayUnavailableError && error.status === 429;
}

/** What the gateway asked for, uncapped (the refetcher caps its own wait), or what is left of an earlier answer's wait. */
function secondsToWait(deps: PatientGetDeps, error: GatewayUnavailableError | GatewayRetryAfterError): number {
  if (!(error instanceof GatewayRetryAfterError)) return DEFAULT_RETRY_AFTER_SECONDS;
  return error.requestedSeconds ?? Math.max(0, Math.ceil((error.retryAt.getTime() - deps.clock().getTime()) / 1000));
}

/**
 * A timer may fire a millisecond before the wall clock reaches its end, and the refetcher holds
 * calls back until exactly `retryAt`: a retry sent right at the end of `seconds` could be refused by
 * our own hold and counted as a second rate limit. The wait ends a few ms past `retryAt` instead.
 */
const CLOCK_MARGIN_MS = 5;

function msToWait(deps: PatientGetDeps, error: GatewayUnavailableError | GatewayRetryAfterError, seconds: number): number {
  if (!(error instanceof GatewayRetryAfterError)) return seconds * 1000;
  return Math.max(seconds * 1000, error.retryAt.getTime() - deps.clock().getTime() + CLOCK_MARGIN_MS);
}

/** A call the refetcher did not send, holding calls back for an earlier answer's Retry-After. */
const heldBack = (error: GatewayUnavailableError | GatewayRetryAfterError): boolean => error instanceof GatewayRetryAfterError && error.status === undefined;

/**
 * What really happened to the call: the gateway answered (its status, and what its answer says,
 * bounded with the API key masked), or this run's own limiter held the call back unsent.
 */
function whatHappened(deps: PatientGetDeps, error: GatewayUnavailableError | GatewayRetryAfterError): string {
  if (!(error instanceof GatewayRetryAfterError)) return `the ${deps.provider} API answered ${error.status} without Retry-After`;
  if (heldBack(error))
    return `no call was sent: this run holds back calls to the ${deps.provider} API until ${error.retryAt.toISOString()}, as an earlier answer asked (Retry-After)`;
  return `the ${deps.provider} API answered ${error.status}${error.answer ? ` (${error.answer})` : ''}`;
}

/**
 * The gateway's own answer says nothing of the wait, and "run it again" at once only meets the
 * same 429: the operator is told what happened, how long the wait is, and from when a run can pass.
 */
function tooLongToWait(deps: PatientGetDeps, error: GatewayRetryAfterError | GatewayUnavailableError, seconds: number): GatewayRetryAfterError {
  const notBefore = new Date(deps.clock().getTime() + seconds * 1000);
  const wait = heldBack(error) ? `${seconds} s from now` : `it asks to wait ${seconds} s (Retry-After)`;
  const message = `${whatHappened(deps, error)}; ${wait}, more than the ${MAX_RETRY_AFTER_SECONDS} s a ${deps.operation} waits: not before ${notBefore.toISOString()}`;
  return new GatewayRetryAfterError(deps.provider, message, { status: error.status, retryAt: notBefore, requestedSeconds: seconds, cause: error });
}

/** One page, waiting out each 429's Retry-After (the breaker counts them too); `progress` counts the waits. */
export async function getWaitingOutRateLimits(deps: PatientGetDeps, path: string, progress: { rateLimitedWaits: number }): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.get(path);
    } catch (error) {
      if (!rateLimited(error) || attempt >= MAX_RATE_LIMITED_RETRIES) throw error;
      const seconds = secondsToWait(deps, error);
      if (seconds > MAX_RETRY_AFTER_SECONDS) throw tooLongToWait(deps, error, seconds);
      progress.rateLimitedWaits += 1;
      deps.notice(`${deps.provider}: ${whatHappened(deps, error)}; waiting ${seconds} s before asking again`);
      await deps.sleep(msToWait(deps, error, seconds));
    }
  }
}
