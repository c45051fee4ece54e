import { and, asc, eq, gte, inArray, lt } from 'drizzle-orm';
import type { PgBoss } from 'pg-boss';
import type { Database, Executor, Transaction } from '../db/client.ts';
import { webhookInbox } from '../db/schema.ts';
import { enqueueWebhookJobs } from '../queue/enqueue.ts';
import type { EnqueueableEvent } from '../queue/queues.ts';
import { OperationIncompleteError } from './errors.ts';
import type { ReplayableStatus } from './statuses.ts';

export { type ReplayableStatus, replayableStatuses } from './statuses.ts';

export interface ReplayDeps {
  db: Database;
  boss: PgBoss;
}

export interface ReplayFilter {
  provider: string;
  /** Default: `['failed']`. */
  statuses?: readonly ReplayableStatus[];
  /** Received at or after (inclusive). */
  since?: Date;
  /** Received before (exclusive). */
  until?: Date;
  /** Only these events (the gateway's ids). */
  eventIds?: readonly string[];
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
}

interface Candidate {
  id: number;
  eventId: string;
  status: string;
}

function matchingRows(filter: ReplayFilter, statuses: readonly ReplayableStatus[]) {
  return and(
    eq(webhookInbox.provider, filter.provider),
    inArray(webhookInbox.status, [...statuses]),
    filter.since ? gte(webhookInbox.receivedAt, filter.since) : undefined,
    filter.until ? lt(webhookInbox.receivedAt, filter.until) : undefined,
    filter.eventIds ? inArray(webhookInbox.eventId, [...filter.eventIds]) : undefined,
  );
}

/**
 * The ids are read once, up front: each row is then visited at most once per replay, even when a
 * replayed event fails again (and so matches the filter again) before the replay has finished.
 * The (status, received_at) index serves the status/time part of the filter.
 */
export async function selectReplayCandidates(db: Executor, filter: ReplayFilter, statuses: readonly ReplayableStatus[]): Promise<Candidate[]> {
  if (filter.eventIds?.length === 0) return [];
  return db
    .select({ id: webhookInbox.id, eventId: webhookInbox.eventId, status: webhookInbox.status })
    .from(webhookInbox)
    .where(matchingRows(filter, statuses))
    .orderBy(asc(webhookInbox.receivedAt), asc(webhookInbox.id));
}

/**
 * Back to `pending` with the error cleared and the recorded fact dropped (processing reads the
 * event afresh: its payload again, or a new gateway snapshot); the status is re-checked so a row
 * that changed since the candidates were read (another replay, a late worker) is left as it is.
 */
export async function resetEventsToPending(tx: Transaction, ids: number[], statuses: readonly ReplayableStatus[]): Promise<EnqueueableEvent[]> {
  return tx
    .update(webhookInbox)
    .set({ status: 'pending', lastError: null, fact: null })
    .where(and(inArray(webhookInbox.id, ids), inArray(webhookInbox.status, [...statuses])))
    .returning({
      id: webhookInbox.id,
      provider: webhookInbox.provider,
      eventId: webhookInbox.eventId,
      resourceId: webhookInbox.resourceId,
      receivedAt: webhookInbox.receivedAt,
    })
    .then((rows) => rows.sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime() || a.id - b.id));
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
  const candidates = await selectReplayCandidates(deps.db, filter, statuses);
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
  if (result.dryRun) return result;
  for (let start = 0; start < candidates.length; start += batchSize) {
    const ids = candidates.slice(start, start + batchSize).map((c) => c.id);
    try {
      result.replayed += await deps.db.transaction(async (tx) => {
        const events = await resetEventsToPending(tx, ids, statuses);
        await enqueueWebhookJobs(deps.boss, tx, events);
        return events.length;
      });
    } catch (error) {
      // Earlier batches are committed (and queued); running the same replay again picks up the rest.
      throw new OperationIncompleteError(`replay of ${filter.provider}`, `${result.replayed} of ${result.matched} events replayed`, error);
    }
  }
  return result;
}
