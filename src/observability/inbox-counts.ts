import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import type { InboxStatus } from '../db/schema.ts';

/**
 * The database-derived numbers behind the gauges. Each query is constrained on `status` (and
 * `received_at`) so it walks `webhook_inbox_status_received_at_idx`: its cost follows the backlog
 * and the last hour's traffic, never the table's size. Counting processed rows over all time would
 * be a table scan, so those totals are not gauges (use `inboxctl stats`, or the settled counter).
 */

export interface BacklogCount {
  provider: string;
  status: 'pending' | 'failed';
  events: number;
  /** Seconds since the oldest row in this status was received, by the database's clock. */
  oldestAgeSeconds: number;
}

export async function countBacklogByProvider(db: Executor): Promise<BacklogCount[]> {
  const rows = await db.execute<{ provider: string; status: 'pending' | 'failed'; events: number; oldest_age_seconds: number }>(sql`
    select provider, status, count(*)::int as events,
           extract(epoch from now() - min(received_at))::float8 as oldest_age_seconds
    from webhook_inbox
    where status in ('pending', 'failed')
    group by provider, status`);
  return rows.map((r) => ({ provider: r.provider, status: r.status, events: r.events, oldestAgeSeconds: Math.max(0, r.oldest_age_seconds) }));
}

export interface RecentCount {
  provider: string;
  status: InboxStatus;
  events: number;
}

/**
 * Rows received in the last `seconds`, by current status. Listing every status lets the planner use
 * the (status, received_at) index as four range scans instead of scanning for the time range.
 */
export async function countRecentByProvider(db: Executor, seconds: number): Promise<RecentCount[]> {
  const rows = await db.execute<{ provider: string; status: InboxStatus; events: number }>(sql`
    select provider, status, count(*)::int as events
    from webhook_inbox
    where status in ('pending', 'processed', 'ignored', 'failed')
      and received_at >= now() - make_interval(secs => ${seconds})
    group by provider, status`);
  return [...rows];
}
