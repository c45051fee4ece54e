import { and, asc, count, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Database, Executor, Transaction } from '../db/client.ts';
import { type InboxStatus, webhookInbox } from '../db/schema.ts';
import { type ArchiveWriter, type ArchivedEvent, archiveFilePath } from './archive.ts';
import { OperationIncompleteError, OperationRefusedError } from './errors.ts';
import { type PurgeableStatus, retentionStatuses } from './statuses.ts';

export { type PurgeableStatus, purgeableStatuses, retentionStatuses } from './statuses.ts';

const DAY_MS = 86_400_000;

/** What retention needs of a configured provider. */
export interface RetentionPolicy {
  name: string;
  /** Its dedupe window: rows younger than this stay. */
  retentionDays: number;
  /** How long its gateway may resend an event. */
  resendWindowDays: number;
}

// Serialises purges of one provider across processes (the daily job and an operator's CLI), so
// two writers never append to the same archive file at once. Any constant apps agree on.
const PURGE_LOCK_NAMESPACE = 72_010_002;

export interface PurgeDeps {
  db: Database;
  archive: ArchiveWriter;
}

export interface PurgeRequest {
  provider: string;
  /** Rows received strictly before this instant are archived and deleted. */
  cutoff: Date;
  archiveDir: string;
  statuses?: readonly PurgeableStatus[];
  /** Rows per transaction. Default 500. */
  batchSize?: number;
  dryRun?: boolean;
  /** Checked between batches: stops cleanly (committed batches stay done). */
  signal?: AbortSignal;
}

export interface PurgeResult {
  provider: string;
  cutoff: Date;
  statuses: PurgeableStatus[];
  dryRun: boolean;
  /** Rows archived and deleted (on a dry run: rows that would be). */
  deleted: number;
  /** Archive files written (or that would be), with their row counts. */
  files: Array<{ file: string; rows: number }>;
  /** True when the signal stopped the run before it was done. */
  stopped: boolean;
}

/**
 * The dedupe window is the provider's retention: an event deleted inside it can come back as a
 * late resend and be taken for new. A cut-off inside the window is refused unless forced; a
 * provider this configuration does not know has no known window, so it needs `force` too.
 */
export function checkPurgeCutoff(provider: string, cutoff: Date, now: Date, providers: ReadonlyMap<string, RetentionPolicy>, force: boolean): string[] {
  const configured = providers.get(provider);
  const warnings: string[] = [];
  if (!configured) {
    const message = `provider "${provider}" is not configured here, so its dedupe window is unknown`;
    if (!force) throw new OperationRefusedError('dedupe_window_unknown', `${message}. Run with the service's configuration, or pass --force.`);
    return [message];
  }
  const windowStart = new Date(now.getTime() - configured.retentionDays * DAY_MS);
  if (cutoff.getTime() > windowStart.getTime()) {
    const message = `the cut-off ${cutoff.toISOString()} is inside ${provider}'s ${configured.retentionDays}-day dedupe window (rows received after ${windowStart.toISOString()} must stay so late resends are recognised)`;
    if (!force) throw new OperationRefusedError('inside_dedupe_window', `${message}. Pass --force to purge anyway.`);
    warnings.push(message);
  }
  const resendStart = new Date(now.getTime() - configured.resendWindowDays * DAY_MS);
  if (cutoff.getTime() > resendStart.getTime()) {
    warnings.push(`the cut-off is inside the gateway's own ${configured.resendWindowDays}-day resend window: a resend of a purged event WILL be processed again`);
  }
  return warnings;
}

/** A timestamp as UTC ISO text with PostgreSQL's microseconds (a JS Date would keep milliseconds). */
function isoMicros<T extends string | null>(column: AnyPgColumn) {
  return sql<T>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

function archivedColumns() {
  return {
    id: webhookInbox.id,
    provider: webhookInbox.provider,
    eventId: webhookInbox.eventId,
    eventType: webhookInbox.eventType,
    resourceId: webhookInbox.resourceId,
    status: webhookInbox.status,
    attempts: webhookInbox.attempts,
    lastError: webhookInbox.lastError,
    occurredAt: isoMicros<string>(webhookInbox.occurredAt),
    receivedAt: isoMicros<string>(webhookInbox.receivedAt),
    processedAt: isoMicros<string | null>(webhookInbox.processedAt),
    payloadJson: sql<string>`${webhookInbox.payload}::text`,
    payloadLossy: webhookInbox.payloadLossy,
    factJson: sql<string | null>`${webhookInbox.fact}::text`,
    fingerprint: webhookInbox.fingerprint,
    rawBody: webhookInbox.rawBody,
  };
}

type ArchivedRow = Awaited<ReturnType<typeof lockExpiredBatch>>[number];

/**
 * The next batch, oldest first, on the (status, received_at) index; `from` (the last batch's
 * newest received_at) lets the scan start where the previous batch ended instead of walking
 * the index entries of rows just deleted. Locked rows (a replay in flight) are skipped.
 */
export async function lockExpiredBatch(tx: Transaction, provider: string, status: PurgeableStatus, cutoff: Date, from: string | undefined, limit: number) {
  return tx
    .select(archivedColumns())
    .from(webhookInbox)
    .where(
      and(
        eq(webhookInbox.status, status),
        lt(webhookInbox.receivedAt, cutoff),
        from ? gte(webhookInbox.receivedAt, sql`${from}::timestamptz`) : undefined,
        eq(webhookInbox.provider, provider),
      ),
    )
    .orderBy(asc(webhookInbox.receivedAt), asc(webhookInbox.id))
    .limit(limit)
    .for('update', { skipLocked: true });
}

export async function deleteEvents(tx: Transaction, ids: number[]): Promise<void> {
  await tx.delete(webhookInbox).where(inArray(webhookInbox.id, ids));
}

/** Per archive file, how many rows a purge would move (a dry run's answer). */
export async function countExpiredByDay(db: Executor, provider: string, statuses: readonly PurgeableStatus[], cutoff: Date) {
  const day = sql<string>`to_char(${webhookInbox.receivedAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  return db
    .select({ day, rows: count() })
    .from(webhookInbox)
    .where(and(inArray(webhookInbox.status, [...statuses]), lt(webhookInbox.receivedAt, cutoff), eq(webhookInbox.provider, provider)))
    .groupBy(day)
    .orderBy(day);
}

function toArchived(row: ArchivedRow): ArchivedEvent {
  return {
    v: 1,
    id: row.id,
    provider: row.provider,
    event_id: row.eventId,
    event_type: row.eventType,
    resource_id: row.resourceId,
    status: row.status as InboxStatus,
    attempts: row.attempts,
    last_error: row.lastError,
    occurred_at: row.occurredAt,
    received_at: row.receivedAt,
    processed_at: row.processedAt,
    payload_json: row.payloadJson,
    payload_lossy: row.payloadLossy,
    raw_body_base64: Buffer.from(row.rawBody).toString('base64'),
    fact_json: row.factJson,
    fingerprint: row.fingerprint,
  };
}

/** One transaction: lock a batch, append it to its archive files (fsynced), delete it. */
async function purgeBatch(deps: PurgeDeps, request: PurgeRequest, status: PurgeableStatus, from: string | undefined, limit: number) {
  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${PURGE_LOCK_NAMESPACE}, hashtext(${request.provider}))`);
    const rows = await lockExpiredBatch(tx, request.provider, status, request.cutoff, from, limit);
    const byFile = new Map<string, ArchivedEvent[]>();
    for (const row of rows) {
      const file = archiveFilePath(request.archiveDir, request.provider, row.receivedAt);
      byFile.set(file, [...(byFile.get(file) ?? []), toArchived(row)]);
    }
    for (const [file, events] of byFile) await deps.archive.append(file, events);
    if (rows.length > 0) await deleteEvents(tx, rows.map((r) => r.id));
    return { rows, byFile };
  });
}

/**
 * Archives, then deletes, one provider's rows received before the cut-off, in small
 * transactions so no lock is held for long. Archive-before-delete: a batch's rows are deleted in
 * the transaction that appended them to an fsynced archive file, so a failure at any point
 * leaves every row either in the database or in the archive (possibly both: restore skips rows
 * that exist).
 */
export async function purgeEvents(deps: PurgeDeps, request: PurgeRequest): Promise<PurgeResult> {
  const statuses = [...new Set(request.statuses ?? retentionStatuses)];
  const limit = request.batchSize ?? 500;
  const result: PurgeResult = { provider: request.provider, cutoff: request.cutoff, statuses, dryRun: request.dryRun === true, deleted: 0, files: [], stopped: false };
  if (result.dryRun) {
    for (const { day, rows } of await countExpiredByDay(deps.db, request.provider, statuses, request.cutoff)) {
      result.files.push({ file: archiveFilePath(request.archiveDir, request.provider, day), rows });
      result.deleted += rows;
    }
    return result;
  }
  const files = new Map<string, number>();
  try {
    for (const status of statuses) {
      let from: string | undefined;
      for (;;) {
        if (request.signal?.aborted) {
          result.stopped = true;
          break;
        }
        const { rows, byFile } = await purgeBatch(deps, request, status, from, limit);
        for (const [file, events] of byFile) files.set(file, (files.get(file) ?? 0) + events.length);
        result.deleted += rows.length;
        if (rows.length < limit) break;
        from = rows[rows.length - 1]!.receivedAt;
      }
    }
  } catch (error) {
    throw new OperationIncompleteError(`purge of ${request.provider}`, `${result.deleted} rows archived and deleted`, error);
  } finally {
    result.files = [...files].map(([file, rows]) => ({ file, rows })).sort((a, b) => a.file.localeCompare(b.file));
  }
  return result;
}

export interface RetentionRequest {
  providers: ReadonlyMap<string, RetentionPolicy>;
  now: Date;
  archiveDir: string;
  batchSize?: number;
  signal?: AbortSignal;
}

/**
 * The daily job: every configured provider keeps exactly its dedupe window (its retentionDays);
 * processed and ignored rows older than that are archived and deleted. Providers this
 * configuration does not know are left alone: their window is unknown.
 */
export async function applyRetention(deps: PurgeDeps, request: RetentionRequest): Promise<PurgeResult[]> {
  const results: PurgeResult[] = [];
  for (const provider of request.providers.values()) {
    if (request.signal?.aborted) break;
    const cutoff = new Date(request.now.getTime() - provider.retentionDays * DAY_MS);
    results.push(await purgeEvents(deps, { provider: provider.name, cutoff, archiveDir: request.archiveDir, batchSize: request.batchSize, signal: request.signal }));
  }
  return results;
}
