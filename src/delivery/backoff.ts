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

/** The destination's own wait wins when it names one: it knows when it will be back. */
export function nextAttemptDelaySeconds(failures: number, retryAfter: number | undefined, settings: BackoffSettings): number {
  return retryAfter ?? backoffSeconds(failures, settings);
}
