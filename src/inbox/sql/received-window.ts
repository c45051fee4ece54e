/**
 * webhook_inbox is partitioned by month on received_at (drizzle/0012). A statement that names rows
 * by id alone must probe the primary key of every partition (this month, the months made ahead,
 * the default one, every month kept); naming the window the rows were received in lets PostgreSQL
 * prune to their partitions — usually one — at plan time, or at executor start for a generic plan.
 * The cost grows with the months kept: a 100-row lock on 17 partitions holding 13 months took
 * 0.65–0.87 ms with the window against 1.17–1.24 ms without (bench/README.md).
 */

/** A stored event as its id, and when it arrived if known (a job queued by an older version does not say). */
export interface InboxRowRef {
  id: number;
  receivedAt?: Date | undefined;
}

/**
 * `[from, to)` around the rows' received_at, as ISO strings for `$n::timestamptz`; undefined when
 * some row's time is unknown (then every partition is searched: the same rows, found more slowly).
 * Times are known to the millisecond (epochMs rounds the column down), so the window ends 1 ms
 * after the latest one to keep its microseconds inside.
 */
export function receivedWindow(rows: readonly InboxRowRef[]): [from: string, to: string] | undefined {
  let earliest = Infinity;
  let latest = -Infinity;
  for (const { receivedAt } of rows) {
    if (receivedAt === undefined) return undefined;
    const ms = receivedAt.getTime();
    if (Number.isNaN(ms)) return undefined;
    earliest = Math.min(earliest, ms);
    latest = Math.max(latest, ms);
  }
  if (rows.length === 0) return undefined;
  return [new Date(earliest).toISOString(), new Date(latest + 1).toISOString()];
}

/**
 * The condition and its two parameters, numbered from `firstParameter`; an empty condition when
 * the window is unknown. `column` is qualified where the statement joins another relation.
 */
export function receivedWindowCondition(rows: readonly InboxRowRef[], firstParameter: number, column = 'received_at'): { sql: string; parameters: string[] } {
  const window = receivedWindow(rows);
  if (!window) return { sql: '', parameters: [] };
  return { sql: ` and ${column} >= $${firstParameter}::timestamptz and ${column} < $${firstParameter + 1}::timestamptz`, parameters: window };
}
