import { type Database, drizzleExecutor } from '../db/client.ts';
import { countExpiredByDay, deleteEvents, lockExpiredBatch } from '../inbox/sql/archive-rows.ts';
import { type ArchiveWriter, type ArchivedEvent, archiveFilePath, toArchived } from './archive.ts';
import type { PruneOutcome } from '../domain/payments/fact-pruning.ts';
import { pruneQuietPaymentFacts } from './fact-retention.ts';
import { purgeEventKeys } from './key-retention.ts';
import { type PartitionRetentionResult, dropExpiredPartitions } from './partition-retention.ts';
import { OperationIncompleteError, OperationRefusedError, PartialResultError } from './errors.ts';
import { type PurgeableStatus, retentionStatuses } from './statuses.ts';

export type { PurgeableStatus } from './statuses.ts';

const DAY_MS = 86_400_000;

/** What retention needs of a configured provider. */
export interface RetentionPolicy {
  name: string;
  /** Its payloads' window: rows younger than this stay. */
  retentionDays: number;
  /** Its dedupe keys' window (at least retentionDays): a resend within it is a duplicate even after its payload went. */
  keyRetentionDays: number;
  /** How long its gateway may resend an event. */
  resendWindowDays: number;
  /** `require`: its payments are the application's rows, which a fold starts from (fact retention needs to know). */
  unknownPayment: 'create' | 'require';
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
    warnings.push(
      `the cut-off is inside the gateway's own ${configured.resendWindowDays}-day resend window: a resend of a purged event is still a duplicate (its key stays), but one that says something else can no longer be told apart`,
    );
  }
  return warnings;
}

/** One transaction: lock a batch, append it to its archive files (fsynced), delete it. */
async function purgeBatch(deps: PurgeDeps, request: PurgeRequest, status: PurgeableStatus, from: string | undefined, limit: number) {
  return deps.db.transaction(async (transaction) => {
    const tx = drizzleExecutor(transaction);
    await tx.executeSql('select pg_advisory_xact_lock($1, hashtext($2))', [PURGE_LOCK_NAMESPACE, request.provider]);
    const rows = await lockExpiredBatch(tx, request.provider, status, request.cutoff, from, limit);
    const byFile = new Map<string, ArchivedEvent[]>();
    for (const row of rows) {
      const file = archiveFilePath(request.archiveDir, request.provider, row.received_at);
      byFile.set(file, [...(byFile.get(file) ?? []), toArchived(row)]);
    }
    for (const [file, events] of byFile) await deps.archive.append(file, events);
    if (rows.length > 0)
      await deleteEvents(
        tx,
        rows.map((r) => r.id),
      );
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
  const result: PurgeResult = {
    provider: request.provider,
    cutoff: request.cutoff,
    statuses,
    dryRun: request.dryRun === true,
    deleted: 0,
    files: [],
    stopped: false,
  };
  if (result.dryRun) {
    for (const { day, events } of await countExpiredByDay(drizzleExecutor(deps.db), request.provider, statuses, request.cutoff)) {
      result.files.push({ file: archiveFilePath(request.archiveDir, request.provider, day), rows: events });
      result.deleted += events;
    }
    return result;
  }
  const files = new Map<string, number>();
  const listFiles = () => [...files].map(([file, rows]) => ({ file, rows })).sort((a, b) => a.file.localeCompare(b.file));
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
        from = rows[rows.length - 1]!.received_at;
      }
    }
  } catch (error) {
    // The batches before it are committed: their rows are in these files and no longer in the inbox.
    throw new PartialResultError(new OperationIncompleteError(`purge of ${request.provider}`, `${result.deleted} rows archived and deleted`, error), {
      ...result,
      files: listFiles(),
    });
  }
  result.files = listFiles();
  return result;
}

export interface RetentionRequest {
  providers: ReadonlyMap<string, RetentionPolicy>;
  now: Date;
  archiveDir: string;
  batchSize?: number;
  signal?: AbortSignal;
}

/** A provider's retention run: its payloads' purge, then its keys', then its quiet payments' facts. */
export interface RetentionResult extends PurgeResult {
  keyCutoff: Date;
  /** Dedupe keys deleted (past keyRetentionDays, their event no longer stored). */
  keysDeleted: number;
  /** Payment facts pruned (their payment quiet since keyCutoff), and payments checkpointed. */
  facts: PruneOutcome;
}

/** What a retention run did: the months dropped whole (and those kept for an unsettled row), then each provider's purge. */
export interface RetentionRun {
  partitions: PartitionRetentionResult;
  providers: RetentionResult[];
}

const noFactsPruned = (): PruneOutcome => ({ checkpointed: 0, withoutPayment: 0, active: 0, factsDeleted: 0 });

/**
 * The daily job, in three tiers per configured provider: processed and ignored rows older than its
 * retentionDays are archived and deleted (their payment facts stay); then its dedupe keys older
 * than keyRetentionDays are deleted, in a step of their own; then the facts of its payments quiet
 * for as long, each payment's state kept as its checkpoint (fact-retention.ts). Providers this configuration does not know are left alone:
 * their windows are unknown. A failure throws a PartialResultError whose partial is the run up to
 * it: the months dropped and the batches deleted before it are committed, and must be counted.
 */
export async function applyRetention(deps: PurgeDeps, request: RetentionRequest): Promise<RetentionRun> {
  const run: RetentionRun = { partitions: { dropped: [], kept: [] }, providers: [] };
  try {
    // Whole months first: what they held needs no row-by-row delete below.
    run.partitions = await dropExpiredPartitions(deps, { providers: [...request.providers.values()], now: request.now, archiveDir: request.archiveDir }).catch(
      (error: unknown) => {
        run.partitions = partialOf<PartitionRetentionResult>(error) ?? run.partitions;
        throw error;
      },
    );
    for (const provider of request.providers.values()) {
      if (request.signal?.aborted) break;
      const cutoff = new Date(request.now.getTime() - provider.retentionDays * DAY_MS);
      const keyCutoff = new Date(request.now.getTime() - provider.keyRetentionDays * DAY_MS);
      const purged = await purgeEvents(deps, {
        provider: provider.name,
        cutoff,
        archiveDir: request.archiveDir,
        batchSize: request.batchSize,
        signal: request.signal,
      }).catch((error: unknown) => {
        const partial = partialOf<PurgeResult>(error);
        if (partial) run.providers.push({ ...partial, keyCutoff, keysDeleted: 0, facts: noFactsPruned() });
        throw error;
      });
      const result: RetentionResult = { ...purged, keyCutoff, keysDeleted: 0, facts: noFactsPruned() };
      run.providers.push(result);
      const batchSize = request.batchSize ?? 500;
      result.keysDeleted = await purgeEventKeys(deps.db, { provider: provider.name, cutoff: keyCutoff, batchSize, signal: request.signal });
      result.facts = await pruneQuietPaymentFacts(deps.db, {
        provider: provider.name,
        cutoff: keyCutoff,
        require: provider.unknownPayment === 'require',
        batchSize,
        signal: request.signal,
      });
    }
  } catch (error) {
    throw new PartialResultError(error instanceof PartialResultError ? error.cause : error, run);
  }
  return run;
}

/** How far a step that failed got, when it says (the months or batches before the failure are committed). */
function partialOf<T>(error: unknown): T | undefined {
  return error instanceof PartialResultError ? (error.partial as T) : undefined;
}
