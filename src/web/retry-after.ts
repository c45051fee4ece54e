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
 * `Retry-After` as seconds from `now`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3), nothing
 * else. Undefined when absent or unreadable; a date in the past means now. Not capped: how long is
 * too long to believe is the caller's to say (a destination, a gateway API).
 */
export function parseRetryAfter(header: string | null | undefined, now: Date): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  const seconds = /^\d+$/.test(value) ? Number(value) : (httpDateMs(value) - now.getTime()) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.max(0, seconds);
}
