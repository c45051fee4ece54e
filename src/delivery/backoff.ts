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

/**
 * The three HTTP-date forms of RFC 9110 §5.6.7, all in GMT: IMF-fixdate, and the obsolete RFC 850
 * and asctime forms a recipient must still read. Matched before Date.parse, which reads almost
 * anything as a date: "1.5" as 2001, "+3600" as the year 3600.
 */
const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC_850_DATE = /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME_DATE = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

function httpDateMs(value: string): number {
  if (IMF_FIXDATE.test(value) || RFC_850_DATE.test(value)) return Date.parse(value);
  // asctime names no zone; Date.parse would take it as local time.
  if (ASCTIME_DATE.test(value)) return Date.parse(`${value} GMT`);
  return Number.NaN;
}

/**
 * `Retry-After` as seconds from `now`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3). Undefined
 * when absent or unreadable (then the backoff applies); a date in the past means now.
 */
export function retryAfterSeconds(header: string | null, now: Date): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  const seconds = /^\d+$/.test(value) ? Number(value) : (httpDateMs(value) - now.getTime()) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(RETRY_AFTER_CEILING_SECONDS, Math.max(0, seconds));
}

/** The destination's own wait wins when it names one: it knows when it will be back. */
export function nextAttemptDelaySeconds(failures: number, retryAfter: number | undefined, settings: BackoffSettings): number {
  return retryAfter ?? backoffSeconds(failures, settings);
}
