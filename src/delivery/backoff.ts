import { parseRetryAfter } from '../web/retry-after.ts';

/** The longest wait a Retry-After may ask for; beyond it the destination is treated as down for that long anyway. */
export const RETRY_AFTER_CEILING_SECONDS = 24 * 3600;

export interface BackoffSettings {
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
}

/**
 * The wait before the next try after `failures` failures in a row: retryDelay · 2^(failures−1),
 * times a random factor in [1, 2) so lanes that failed together do not retry together, capped.
 */
export function backoffSeconds(failures: number, settings: BackoffSettings, random: () => number = Math.random): number {
  const exponential = settings.retryDelaySeconds * 2 ** Math.min(30, Math.max(0, failures - 1));
  return Math.min(settings.retryDelayMaxSeconds, exponential * (1 + random()));
}

/** The destination's `Retry-After` (strictly read: web/retry-after.ts) as seconds from `now`, capped. */
export function retryAfterSeconds(header: string | null, now: Date): number | undefined {
  const seconds = parseRetryAfter(header, now);
  return seconds === undefined ? undefined : Math.min(RETRY_AFTER_CEILING_SECONDS, seconds);
}

/**
 * A destination's Retry-After may lengthen the wait, never shorten it: `Retry-After: 0` or a date
 * already past would otherwise spend a lane's attempts in milliseconds and park it (8 attempts in
 * 89 ms, found from outside), for a consumer that only asked for a moment.
 */
export function nextAttemptDelaySeconds(failures: number, retryAfter: number | undefined, settings: BackoffSettings, random?: () => number): number {
  return Math.max(backoffSeconds(failures, settings, random), retryAfter ?? 0);
}

/**
 * An answer that asks the sender to slow down rather than saying the event failed: 429, and 503
 * with a Retry-After it could read. Such answers count towards parking only once the destination's
 * patience is spent (sql/lanes.ts); a 503 without Retry-After is a failure like any other 5xx.
 */
export function isThrottle(status: number | null, retryAfter: number | undefined): boolean {
  return status === 429 || (status === 503 && retryAfter !== undefined);
}
