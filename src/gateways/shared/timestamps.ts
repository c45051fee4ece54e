/**
 * Gateways write times in many shapes: seconds or .NET-style 7 fractional digits or nanoseconds,
 * `Z` or `-03:00` or `+0000`, a `T` or a space, sometimes no zone at all. One lenient parser for
 * all of them; fractions beyond milliseconds are truncated (a Date holds milliseconds).
 */
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** Minutes east of UTC for `Z`, `+HH`, `+HHMM`, `+HH:MM`; undefined when out of range. */
function offsetMinutes(zone: string): number | undefined {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) return undefined;
  return sign * (hours * 60 + minutes);
}

/**
 * Parses an ISO-8601-like timestamp. `zoneWhenAbsent` is the gateway's documented local zone for
 * times written without one (`Z` unless a driver knows better). Undefined when it is not a real
 * instant (month 13, 24:00, …).
 */
export function parseLenientTimestamp(value: string, zoneWhenAbsent = 'Z'): Date | undefined {
  const match = TIMESTAMP.exec(value.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '0', fraction = '', zone = zoneWhenAbsent] = match;
  const offset = offsetMinutes(zone);
  if (offset === undefined) return undefined;
  const fields = [Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)] as const;
  const utc = Date.UTC(...fields, Number(fraction.slice(0, 3).padEnd(3, '0')));
  const check = new Date(utc);
  // Date.UTC silently rolls 31 Feb into March: a field that moved means the input was not a date.
  if (
    check.getUTCMonth() !== fields[1] ||
    check.getUTCDate() !== fields[2] ||
    check.getUTCHours() !== fields[3] ||
    check.getUTCMinutes() !== fields[4] ||
    check.getUTCSeconds() !== fields[5]
  ) {
    return undefined;
  }
  return new Date(utc - offset * 60_000);
}

/** Unix time in seconds or milliseconds: values from 1e12 on are milliseconds (1e12 s is the year 33658). */
export function fromUnixSecondsOrMillis(value: number): Date {
  return new Date(value >= 1e12 ? value : value * 1000);
}

/** A time from JSON: an ISO-like string or a unix number. Undefined when absent or unreadable. */
export function timestampFromJson(value: unknown, zoneWhenAbsent = 'Z'): Date | undefined {
  if (typeof value === 'string') {
    if (/^\d+$/.test(value.trim())) return fromUnixSecondsOrMillis(Number(value));
    return parseLenientTimestamp(value, zoneWhenAbsent);
  }
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return fromUnixSecondsOrMillis(value);
  return undefined;
}
