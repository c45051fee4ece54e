import type { PgBoss } from 'pg-boss';
import { type Database, drizzleExecutor } from '../db/client.ts';
import { resetEventsToPending } from '../inbox/sql/mark-events.ts';
import type { InboxStatus } from '../db/schema.ts';
import { type ReplayFilter as CandidateFilter, findEventStatuses, findReplayCandidates } from '../inbox/sql/pending-events.ts';
import { enqueueWebhookJobs } from '../queue/enqueue.ts';
import { OperationIncompleteError, PartialResultError } from './errors.ts';
import type { ReplayableStatus } from './statuses.ts';

export type { ReplayableStatus } from './statuses.ts';

export interface ReplayDeps {
  db: Database;
  boss: PgBoss;
}

export interface ReplayFilter extends CandidateFilter {
  /** Default: `['failed']`. */
  statuses?: readonly ReplayableStatus[];
}

export interface ReplayOptions {
  /** Count and list what would be replayed; change nothing. */
  dryRun?: boolean;
  /** Rows per transaction (status change + jobs commit together). Default 500. */
  batchSize?: number;
  /** How many event ids the result lists. Default 20. */
  sampleSize?: number;
}

export interface ReplayResult {
  provider: string;
  statuses: ReplayableStatus[];
  dryRun: boolean;
  /** Rows that matched the filter when the replay started. */
  matched: number;
  /** Rows put back to `pending` with a job (0 on a dry run). */
  replayed: number;
  /** Matched rows by status. */
  byStatus: Partial<Record<ReplayableStatus, number>>;
  /** The first matching event ids, oldest first. */
  sampleEventIds: string[];
  /**
   * With `eventIds`: each named id the filter did not match, with its status (`null`: no event of
   * this provider has the id), so a processed event is not mistaken for a wrong id.
   */
  notMatched?: Array<{ eventId: string; status: InboxStatus | null }>;
}

/**
 * Replays stored events: matching rows go back to `pending` (last_error cleared) and get a job in
 * the same transaction, so nothing waits for the sweeper and no row is left pending without a job.
 * The one code path for the CLI and the dashboard. Replaying the same set twice is harmless: the
 * second run finds the rows no longer failed/ignored, and a stray extra job finds its row no
 * longer pending.
 */
export async function replayEvents(deps: ReplayDeps, filter: ReplayFilter, options: ReplayOptions = {}): Promise<ReplayResult> {
  const statuses = [...new Set(filter.statuses ?? (['failed'] as const))];
  const batchSize = options.batchSize ?? 500;
  // The ids are read once, up front: each row is then visited at most once per replay, even when a
  // replayed event fails again (and so matches the filter again) before the replay has finished.
  const candidates = await findReplayCandidates(drizzleExecutor(deps.db), filter, statuses);
  const byStatus: Partial<Record<ReplayableStatus, number>> = {};
  for (const { status } of candidates) byStatus[status as ReplayableStatus] = (byStatus[status as ReplayableStatus] ?? 0) + 1;
  const result: ReplayResult = {
    provider: filter.provider,
    statuses,
    dryRun: options.dryRun === true,
    matched: candidates.length,
    replayed: 0,
    byStatus,
    sampleEventIds: candidates.slice(0, options.sampleSize ?? 20).map((c) => c.eventId),
  };
  if (filter.eventIds) {
    const matchedIds = new Set(candidates.map((c) => c.eventId));
    const unmatchedIds = [...new Set(filter.eventIds)].filter((id) => !matchedIds.has(id));
    const statusOf = new Map((await findEventStatuses(drizzleExecutor(deps.db), filter.provider, unmatchedIds)).map((e) => [e.eventId, e.status]));
    result.notMatched = unmatchedIds.map((eventId) => ({ eventId, status: statusOf.get(eventId) ?? null }));
  }
  if (result.dryRun) return result;
  for (let start = 0; start < candidates.length; start += batchSize) {
    const ids = candidates.slice(start, start + batchSize).map((c) => c.id);
    try {
      result.replayed += await deps.db.transaction(async (tx) => {
        const inbox = drizzleExecutor(tx);
        const events = await resetEventsToPending(inbox, ids, statuses);
        await enqueueWebhookJobs(deps.boss, inbox, events);
        return events.length;
      });
    } catch (error) {
      // Earlier batches are committed (and queued); running the same replay again picks up the rest.
      throw new PartialResultError(
        new OperationIncompleteError(`replay of ${filter.provider}`, `${result.replayed} of ${result.matched} events replayed`, error),
        { ...result },
      );
    }
  }
  return result;
}
