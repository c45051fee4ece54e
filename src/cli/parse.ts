import { usageError } from './exit-codes.ts';

const UNITS_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `90m`, `45s`, `2w` → milliseconds. */
export function parseDuration(value: unknown, option: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([smhdw])$/.exec(String(value ?? '').trim());
  if (!match) throw usageError(`${option}: "${String(value)}" is not a duration; use a number and a unit: 45s, 90m, 12h, 30d, 2w.`);
  return Number(match[1]) * UNITS_MS[match[2]!]!;
}

/** An ISO-8601 instant (`2026-12-01`, `2026-12-01T14:00:00Z`), or a duration meaning that long ago (`2h`). */
export function parseInstant(value: unknown, option: string, now: Date): Date {
  const text = String(value ?? '').trim();
  if (/^\d+(?:\.\d+)?\s*[smhdw]$/.test(text)) return new Date(now.getTime() - parseDuration(text, option));
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const instant = new Date(text);
    if (!Number.isNaN(instant.getTime())) return instant;
  }
  throw usageError(`${option}: "${text}" is neither an ISO-8601 time (2026-12-01T14:00:00Z) nor a duration ago (2h, 7d).`);
}

export function parsePositiveInt(value: unknown, option: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw usageError(`${option}: "${String(value)}" is not a positive whole number.`);
  return n;
}

/** A repeatable option (`--status failed --status ignored`) or a comma list (`--status failed,ignored`). */
export function listOption(value: unknown): string[] {
  if (value === undefined || value === null || value === false) return [];
  const values = Array.isArray(value) ? value : [value];
  return values.flatMap((v) => String(v).split(',')).map((v) => v.trim()).filter((v) => v.length > 0);
}

/** Checks every value against the allowed set; reports the first one that is not. */
export function oneOf<T extends string>(values: string[], allowed: readonly T[], option: string): T[] {
  for (const value of values) {
    if (!allowed.includes(value as T)) throw usageError(`${option}: "${value}" is not one of ${allowed.join(', ')}.`);
  }
  return values as T[];
}
