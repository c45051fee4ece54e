/**
 * Building blocks for the inbox's statements: positional values, optional conditions, and the
 * column forms that do not depend on the connection's parsers (see SqlExecutor).
 */

/** Values collected in order; `add` answers the placeholder to write in the text. */
export class Values {
  readonly list: unknown[] = [];
  add(value: unknown): string {
    this.list.push(value);
    return `$${this.list.length}`;
  }
}

/** `where a and b …` of the conditions that apply (undefined: that filter was not asked for). */
export function where(conditions: readonly (string | undefined)[]): string {
  const present = conditions.filter((c): c is string => c !== undefined);
  return present.length === 0 ? '' : `where ${present.join(' and ')}`;
}

/**
 * A timestamptz as whole epoch milliseconds (float8, exact below 2^53): the millisecond a JS Date
 * holds, rounded down as drizzle's own parsing of the text did, for any year.
 */
export const epochMs = (column: string) => `floor(extract(epoch from ${column}) * 1000)::float8`;

export const dateOf = (ms: number): Date => new Date(ms);
export const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

/** A timestamp as UTC ISO text with PostgreSQL's microseconds (a JS Date would keep milliseconds). */
export const isoMicros = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
