import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import type { InboxStatus } from '../../db/schema.ts';

export type ActivityRow = {
  provider: string;
  status: InboxStatus;
  /** Start of the bucket, Unix seconds. */
  bucket: number;
  events: number;
};

/**
 * Rows received since `since`, counted per provider × current status × `bucketSeconds`. Listing
 * every status lets the planner walk the (status, received_at) index as four range scans, so the
 * cost follows the window's traffic and not the table's size.
 */
export async function countReceivedByBucket(db: Executor, since: Date, bucketSeconds: number): Promise<ActivityRow[]> {
  const rows = await db.execute<ActivityRow>(sql`
    select provider, status,
           (floor(extract(epoch from received_at) / ${bucketSeconds}) * ${bucketSeconds})::float8 as bucket,
           count(*)::int as events
    from webhook_inbox
    where status in ('pending', 'processed', 'ignored', 'failed')
      and received_at >= ${since.toISOString()}::timestamptz
    group by 1, 2, 3`);
  return [...rows];
}
