import { type Database, type SqlExecutor, drizzleExecutor } from '../db/client.ts';
import { countExistingEvents, insertExactRowsIfAbsent } from '../inbox/sql/archive-rows.ts';
import { type ArchivedEvent, readArchive, wasSetAsideAsTorn } from './archive.ts';
import { ArchiveFormatError, PartialResultError } from './errors.ts';

export interface RestoreOptions {
  /** Count what would be inserted; write nothing. */
  dryRun?: boolean;
  /** Rows per INSERT. Default 500. */
  batchSize?: number;
}

export interface RestoreResult {
  file: string;
  dryRun: boolean;
  /** Lines read from the archive. */
  read: number;
  /** Rows inserted (on a dry run: rows that would be). */
  inserted: number;
  /** Rows already in the inbox (same id or same provider + event id), left as they are. */
  skipped: number;
}

/**
 * Reads an archive back into the inbox with its original ids, statuses and exact bytes. Rows that
 * exist are skipped, so restoring a file twice, or a file whose rows were never deleted, is safe;
 * so is a row the file holds twice (its first copy is restored).
 */
export async function restoreArchive(database: Database, file: string, options: RestoreOptions = {}): Promise<RestoreResult> {
  const result: RestoreResult = { file, dryRun: options.dryRun === true, read: 0, inserted: 0, skipped: 0 };
  try {
    await restoreInto(drizzleExecutor(database), result, options);
  } catch (error) {
    // Each batch is its own statement: those inserted before the failure stay, and are in no report but this.
    throw new PartialResultError(error, { ...result });
  }
  return result;
}

async function restoreInto(db: SqlExecutor, result: RestoreResult, options: RestoreOptions): Promise<void> {
  const { file } = result;
  const batchSize = options.batchSize ?? 500;
  let batch: ArchivedEvent[] = [];
  const flush = async () => {
    const existing = result.dryRun ? await countExistingEvents(db, batch) : batch.length - (await insertExactRowsIfAbsent(db, batch));
    result.inserted += batch.length - existing;
    result.skipped += existing;
    batch = [];
  };
  const events = readArchive(file);
  const seenIds = new Set<number>();
  const seenEvents = new Set<string>();
  let unreadable: unknown;
  for (;;) {
    let next: IteratorResult<ArchivedEvent>;
    try {
      next = await events.next();
    } catch (error) {
      // A file torn by a crash (set aside as `.damaged-…`) is readable up to the tear, and the rows
      // before it may be in no other place: they are restored before the tear is reported.
      unreadable = error;
      break;
    }
    if (next.done) break;
    const event = next.value;
    result.read += 1;
    // A file can hold a row twice (a crash after its member's fsync, before the DELETE committed,
    // and the next run archived it again): the first copy is restored, a repeat is skipped like a
    // row that exists. One INSERT would otherwise carry both and break the primary key.
    const eventKey = `${event.provider}\u0000${event.event_id}`;
    if (seenIds.has(event.id) || seenEvents.has(eventKey)) {
      result.skipped += 1;
      continue;
    }
    seenIds.add(event.id);
    seenEvents.add(eventKey);
    // One provider per batch keeps the existence check on the (provider, event_id) index.
    if (batch.length >= batchSize || (batch.length > 0 && batch[0]!.provider !== event.provider)) await flush();
    batch.push(event);
  }
  if (batch.length > 0) await flush();
  if (unreadable !== undefined) throw explainTear(unreadable, result);
}

/**
 * A file the archive writer set aside is an archive torn by a crash, not a stranger: asking "is
 * this an inbox archive?" would send the operator looking for the wrong problem. The torn member's
 * rows were never deleted (a member is fsynced before its DELETE), so nothing past the tear is lost.
 */
function explainTear(error: unknown, result: RestoreResult): unknown {
  if (!(error instanceof ArchiveFormatError) || !wasSetAsideAsTorn(result.file)) return error;
  const inserted = `${result.inserted} ${result.dryRun ? 'would be inserted' : 'inserted'}`;
  return new ArchiveFormatError(
    result.file,
    error.line,
    error.reason,
    `The inbox set this file aside as torn by a crash mid-append. The ${result.read} ${result.read === 1 ? 'event' : 'events'} before the tear were read: ${inserted}, ${result.skipped} already in the inbox. The torn part's rows were never deleted from the inbox, so they are there or in a later archive file.`,
  );
}
