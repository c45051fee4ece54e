import { type Database, type SqlExecutor, drizzleExecutor } from '../db/client.ts';
import { type MonthPartition, dropMonthPartition, listMonthPartitions } from '../db/inbox-partitions.ts';
import { deleteConflictsOfPartition, lockSettledPartition, selectPartitionRows } from '../inbox/sql/partition-rows.ts';
import { type ArchiveWriter, type ArchivedEvent, archiveFilePath, toArchived } from './archive.ts';
import { OperationIncompleteError, PartialResultError } from './errors.ts';

const DAY_MS = 86_400_000;
const ARCHIVE_BATCH_ROWS = 5_000;

export interface PartitionRetentionRequest {
  /** Each configured provider's payload window. */
  providers: ReadonlyArray<{ name: string; retentionDays: number }>;
  now: Date;
  archiveDir: string;
}

export interface PartitionRetentionResult {
  /** Months archived whole, then detached and dropped, with their row counts (in all, and per provider). */
  dropped: Array<{ partition: string; rows: number; byProvider: Record<string, number> }>;
  /**
   * Months past every window that still hold a pending or failed row, a row of an unconfigured
   * provider, or a row whose fact is not carried over to payment_facts yet: left to row-by-row retention.
   */
  kept: Array<{ partition: string; blocking: number }>;
}

/**
 * A month whose rows are all past every provider's retention and settled goes whole: its rows are
 * appended to the usual archive files (fsynced), then the partition is detached and dropped, in
 * one transaction that has blocked writes to it from the start (a replay cannot turn a row back
 * to pending half way). A crash before the COMMIT leaves the rows in the database and maybe in the
 * archive too (restore skips rows that exist). A month holding a pending or failed row stays; the
 * per-provider purge that follows deletes its settled rows one batch at a time, as before.
 */
export async function dropExpiredPartitions(
  deps: { db: Database; archive: ArchiveWriter },
  request: PartitionRetentionRequest,
): Promise<PartitionRetentionResult> {
  const result: PartitionRetentionResult = { dropped: [], kept: [] };
  if (request.providers.length === 0) return result;
  // Past every provider's window: the longest one decides.
  const longest = Math.max(...request.providers.map((p) => p.retentionDays));
  const cutoff = new Date(request.now.getTime() - longest * DAY_MS);
  const names = request.providers.map((p) => p.name);
  try {
    for (const partition of await listMonthPartitions(drizzleExecutor(deps.db))) {
      if (partition.to.getTime() > cutoff.getTime()) break;
      const outcome = await deps.db.transaction(async (transaction) =>
        archiveAndDrop(drizzleExecutor(transaction), deps.archive, partition, names, request.archiveDir),
      );
      if (outcome.blocking > 0) result.kept.push({ partition: partition.name, blocking: outcome.blocking });
      else result.dropped.push({ partition: partition.name, rows: outcome.rows, byProvider: outcome.byProvider });
    }
  } catch (error) {
    // The months before it are committed: archived, detached and dropped.
    const progress = `${result.dropped.length} ${result.dropped.length === 1 ? 'month' : 'months'} archived and dropped`;
    throw new PartialResultError(new OperationIncompleteError('retention of whole months', progress, error), {
      dropped: [...result.dropped],
      kept: [...result.kept],
    });
  }
  return result;
}

async function archiveAndDrop(
  tx: SqlExecutor,
  archive: ArchiveWriter,
  partition: MonthPartition,
  providers: string[],
  archiveDir: string,
): Promise<{ rows: number; blocking: number; byProvider: Record<string, number> }> {
  const byProvider: Record<string, number> = {};
  const { rows, blocking } = await lockSettledPartition(tx, partition.name, providers);
  if (blocking > 0) return { rows, blocking, byProvider };
  for (let after = 0; ; ) {
    const batch = await selectPartitionRows(tx, partition.name, after, ARCHIVE_BATCH_ROWS);
    const byFile = new Map<string, ArchivedEvent[]>();
    for (const row of batch) {
      byProvider[row.provider] = (byProvider[row.provider] ?? 0) + 1;
      const file = archiveFilePath(archiveDir, row.provider, row.received_at);
      const events = byFile.get(file) ?? [];
      events.push(toArchived(row));
      byFile.set(file, events);
    }
    for (const [file, events] of byFile) await archive.append(file, events);
    if (batch.length < ARCHIVE_BATCH_ROWS) break;
    after = batch[batch.length - 1]!.id;
  }
  await deleteConflictsOfPartition(tx, partition.from, partition.to);
  await dropMonthPartition(tx, partition);
  return { rows, blocking: 0, byProvider };
}
