import type { PgBoss } from 'pg-boss';
import { type Database, type SqlExecutor, drizzleExecutor } from '../db/client.ts';
import { findStalePendingEvents } from '../inbox/sql/pending-events.ts';
import { enqueueWebhookJobs } from '../queue/enqueue.ts';
import { type EnqueueableEvent, WEBHOOKS_DEAD_LETTER_QUEUE, WEBHOOKS_QUEUE, singletonKeyFor } from '../queue/queues.ts';

export interface SweepDeps {
  db: Database;
  boss: PgBoss;
  clock: () => Date;
}

export interface SweepOptions {
  /** Pending rows received longer ago than this are suspected of having lost their job. */
  olderThanSeconds: number;
  /** Most rows one sweep looks at (oldest first). */
  limit: number;
  /** Find the rows without a job, queue nothing (`inboxctl sweep --dry-run`). */
  dryRun?: boolean;
}

export interface SweepResult {
  /** Pending rows past the age limit that this sweep looked at. */
  considered: number;
  /** Of those, rows that had no live job. */
  withoutJob: number;
  /** Of those, rows queued again: all of them, or none on a dry run. */
  requeued: number;
  dryRun: boolean;
  /** received_at of the oldest row considered. */
  oldestReceivedAt: Date | null;
}

/**
 * Inbox ids among these events that still have a queued, retrying or running job (in the
 * processing queue or on its way through the dead-letter queue). Looked up by singleton key, which
 * pg-boss indexes for live jobs, so the cost follows the candidates, not the job table.
 */
export async function selectEventsWithLiveJobs(db: SqlExecutor, events: EnqueueableEvent[]): Promise<Set<number>> {
  if (events.length === 0) return new Set();
  const { rows } = await db.executeSql<{ inbox_id: string }>(
    `select (data->>'inboxId') as inbox_id from pgboss.job
     where name = any($1::text[]) and singleton_key = any($2::text[]) and state < 'active'
     union all
     select (data->>'inboxId') from pgboss.job
     where name = any($1::text[]) and singleton_key = any($2::text[]) and state = 'active'`,
    [[WEBHOOKS_QUEUE, WEBHOOKS_DEAD_LETTER_QUEUE], [...new Set(events.map(singletonKeyFor))]],
  );
  return new Set(rows.map((r) => Number(r.inbox_id)));
}

/**
 * Re-queues pending events whose job was lost (a crash between commit and pg-boss, a job deleted
 * by hand, a restore). Events that still have a live job are left alone: a job waiting out its
 * retry backoff is not lost, and a second one would only add attempts. Queuing one that does have
 * a job anyway (a race with pg-boss) is harmless: jobs are idempotent.
 */
export async function sweepPendingEvents(deps: SweepDeps, options: SweepOptions): Promise<SweepResult> {
  const cutoff = new Date(deps.clock().getTime() - options.olderThanSeconds * 1000);
  const db = drizzleExecutor(deps.db);
  const stale = await findStalePendingEvents(db, cutoff, options.limit);
  const live = await selectEventsWithLiveJobs(db, stale);
  const lost = stale.filter((event) => !live.has(event.id));
  const dryRun = options.dryRun === true;
  if (lost.length > 0 && !dryRun) await deps.db.transaction((tx) => enqueueWebhookJobs(deps.boss, drizzleExecutor(tx), lost));
  return { considered: stale.length, withoutJob: lost.length, requeued: dryRun ? 0 : lost.length, dryRun, oldestReceivedAt: stale[0]?.receivedAt ?? null };
}
