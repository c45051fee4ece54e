import { usageError } from './exit-codes.ts';

// Every value an operator types is checked here, before anything connects to the database: a
// value that slipped through used to surface as a RangeError from a Date or a PostgreSQL error
// carrying the statement, both reported as "stopped part-way".

const DAY_MS = 86_400_000;
const UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS };
/** 100 years: any cut-off or window an inbox can need, and far inside what a Date and PostgreSQL hold. */
export const MAX_DURATION_MS = 36_500 * DAY_MS;
/** The most rows one transaction takes, as for RETENTION_BATCH_SIZE and SWEEP_BATCH_SIZE. */
export const MAX_BATCH_SIZE = 10_000;
const DURATION = /^(\d+(?:\.\d+)?)([smhdw])$/;
const DURATION_EXAMPLES = '45s, 90m, 12h, 30d, 2w';

/** The option's one value as text: cac collects an option given twice into an array. */
export function singleValue(value: unknown, option: string): string {
  if (Array.isArray(value)) throw usageError(`${option} is given ${value.length} times; give it once.`);
  if (typeof value === 'boolean') throw usageError(`${option} needs a value.`);
  return String(value ?? '').trim();
}

/** A value that may not be empty (a provider, an event id, a folder). */
export function requiredText(value: unknown, option: string): string {
  const text = singleValue(value, option);
  if (text === '') throw usageError(`${option} is empty; give it a value.`);
  return text;
}

/** `30d`, `12h`, `90m`, `45s`, `2w` → milliseconds; from 0 up to 100 years (36500d). */
export function parseDuration(value: unknown, option: string): number {
  const text = singleValue(value, option);
  if (/^-\d/.test(text)) throw usageError(`${option}: "${text}" is negative; a duration is an amount of time, such as ${DURATION_EXAMPLES}.`);
  const match = DURATION.exec(text);
  if (!match) throw usageError(`${option}: "${text}" is not a duration; use a number and a unit: ${DURATION_EXAMPLES}.`);
  const ms = Number(match[1]) * UNITS_MS[match[2]!]!;
  if (!(ms <= MAX_DURATION_MS)) throw usageError(`${option}: "${text}" is longer than 100 years (36500d), the longest duration accepted.`);
  return ms;
}

/** Whether Y-M-D names a day on the calendar: a Date would roll 2026-02-30 over to March 2. */
function isCalendarDay(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * An ISO-8601 instant (`2026-12-01`, `2026-12-01T14:00:00Z`) in the years 1–9999, or a duration
 * meaning that long ago (`2h`; at most 100 years).
 */
export function parseInstant(value: unknown, option: string, now: Date): Date {
  const text = singleValue(value, option);
  if (/^-?\d+(?:\.\d+)?[smhdw]$/.test(text)) return new Date(now.getTime() - parseDuration(text, option));
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    if (!isCalendarDay(text)) throw usageError(`${option}: "${text}" names no day on the calendar.`);
    const instant = new Date(text);
    const year = instant.getUTCFullYear();
    if (!Number.isNaN(instant.getTime()) && year >= 1 && year <= 9999) return instant;
  }
  throw usageError(`${option}: "${text}" is neither an ISO-8601 time in the years 1–9999 (2026-12-01T14:00:00Z) nor a duration ago (2h, 7d).`);
}

/**
 * As parseInstant, for a window that runs from the instant to now: one in the future is exit 2,
 * since nothing was received or created after now and the empty window would read as a quiet one.
 */
export function parsePastInstant(value: unknown, option: string, now: Date): Date {
  const instant = parseInstant(value, option, now);
  if (instant > now)
    throw usageError(`${option}: ${instant.toISOString()} is in the future; give a time in the past (an ISO-8601 time, or a duration ago such as 72h).`);
  return instant;
}

/** A whole number from 1 to `max`, written in digits (no 1e3, no 2.5). */
export function parseCount(value: unknown, option: string, max: number): number {
  const text = singleValue(value, option);
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= max)) throw usageError(`${option}: "${text}" is not a whole number from 1 to ${max.toLocaleString('en-US')}.`);
  return n;
}

/** A repeatable option (`--status failed --status ignored`) or a comma list (`--status failed,ignored`). */
export function listOption(value: unknown, option: string): string[] {
  if (value === undefined || value === null || value === false) return [];
  const values = (Array.isArray(value) ? value : [value]).flatMap((v) => (typeof v === 'boolean' ? [''] : String(v).split(',')));
  if (values.some((v) => v.trim() === '')) throw usageError(`${option} has an empty value; give a value, or several separated by commas.`);
  return values.map((v) => v.trim());
}

/** Checks every value against the allowed set; reports the first one that is not. */
export function oneOf<T extends string>(values: string[], allowed: readonly T[], option: string): T[] {
  for (const value of values) {
    if (!allowed.includes(value as T)) throw usageError(`${option}: "${value}" is not one of ${allowed.join(', ')}.`);
  }
  return values as T[];
}
