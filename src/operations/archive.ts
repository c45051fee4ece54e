import { createReadStream } from 'node:fs';
import { open, rename, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { Writable, pipeline as pipelineWithCallback } from 'node:stream';
import { type Gunzip, createGunzip, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { eventDecisions, eventSources } from '../db/schema.ts';
import type { ExactInboxRow } from '../inbox/sql/archive-rows.ts';
import { ArchiveFormatError } from './errors.ts';
import { makeDurableDirectory, syncDirectory } from '../fs/durable-directory.ts';
import { parseJsonText } from '../format/json-parse.ts';

export { ArchiveFormatError } from './errors.ts';

/**
 * One archived inbox row, one JSON line. Everything that is not exact in JSON is carried as text:
 * `raw_body_base64` is the bytes the gateway signed, `payload_json` is the jsonb as PostgreSQL
 * renders it (a JS number would round a 64-bit id), timestamps keep PostgreSQL's microseconds.
 */
export const archivedEventSchema = z.object({
  v: z.literal(1),
  id: z.number().int(),
  provider: z.string().min(1),
  event_id: z.string().min(1),
  event_type: z.string().min(1),
  resource_id: z.string().nullable(),
  status: z.enum(['pending', 'processed', 'ignored', 'failed']),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  occurred_at: z.string(),
  received_at: z.string(),
  processed_at: z.string().nullable(),
  payload_json: z.string(),
  /** webhook_inbox.payload_lossy; absent in older files (written before the column existed: false). */
  payload_lossy: z.boolean().optional(),
  raw_body_base64: z.string(),
  /** webhook_inbox.fact (what the event meant when processed), as jsonb text; absent in older files. */
  fact_json: z.string().nullable().optional(),
  /** webhook_inbox.fingerprint (what the event says, hashed), so a restored row is judged again; absent in older files. */
  fingerprint: z.string().nullable().optional(),
  /** webhook_inbox.source (`webhook`, or `backfill`: listed from the gateway's API); absent in older files. */
  source: z.enum(eventSources).optional(),
  /** webhook_inbox.decision and decision_detail (jsonb text): why it was processed or ignored; absent in older files. */
  decision: z.enum(eventDecisions).nullable().optional(),
  decision_detail_json: z.string().nullable().optional(),
  /** webhook_inbox.verification (the proof of verification), as jsonb text; absent in older files. */
  verification_json: z.string().nullable().optional(),
});
export type ArchivedEvent = z.infer<typeof archivedEventSchema>;

/** An inbox row as its archive line. */
export function toArchived(row: ExactInboxRow): ArchivedEvent {
  return {
    v: 1,
    id: row.id,
    provider: row.provider,
    event_id: row.event_id,
    event_type: row.event_type,
    resource_id: row.resource_id,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    occurred_at: row.occurred_at,
    received_at: row.received_at,
    processed_at: row.processed_at,
    payload_json: row.payload_json,
    payload_lossy: row.payload_lossy,
    raw_body_base64: row.raw_body_base64,
    fact_json: row.fact_json,
    fingerprint: row.fingerprint,
    source: row.source,
    decision: row.decision,
    decision_detail_json: row.decision_detail_json,
    verification_json: row.verification_json,
  };
}

/** `<dir>/<provider>/<provider>-<YYYY-MM-DD>.jsonl.gz`, the UTC day the rows were received. */
export function archiveFilePath(dir: string, provider: string, receivedAt: string): string {
  return path.join(dir, provider, `${provider}-${receivedAt.slice(0, 10)}.jsonl.gz`);
}

export interface ArchiveWriter {
  /** Appends the events to their file as one gzip member and fsyncs before returning. */
  append(file: string, events: ArchivedEvent[]): Promise<void>;
}

export interface ArchiveWriterOptions {
  clock: () => Date;
  /** Told when an archive file was found damaged and set aside. */
  onSetAside?: (file: string, setAsideAs: string, reason: string) => void;
}

const SET_ASIDE_MARK = '.damaged-';

/** Whether the archive writer renamed this file aside as torn (`….damaged-<time>`). */
export function wasSetAsideAsTorn(file: string): boolean {
  return path.basename(file).includes(SET_ASIDE_MARK);
}

/**
 * Archive files grow by whole gzip members (a file of concatenated members is one valid gzip
 * stream). Rows are deleted only after their member is fsynced, so a crash can at worst leave a
 * torn member at the end of a file whose rows are still in the database. Before the first append
 * of a run, a file is read through once: a torn file is renamed aside (it is still readable up to
 * the tear) and a fresh file started, so later members never sit behind the damage.
 */
export function createArchiveWriter(options: ArchiveWriterOptions): ArchiveWriter {
  const checked = new Set<string>();

  async function ensureIntact(file: string): Promise<void> {
    if (checked.has(file)) return;
    checked.add(file);
    try {
      const source = createReadStream(file);
      const gunzip = createGunzip();
      await pipeline(source, gunzip, discard());
      const tail = unreadTail(source.bytesRead, gunzip);
      if (tail !== undefined) throw new Error(tail);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      const aside = `${file}${SET_ASIDE_MARK}${options.clock().toISOString().replaceAll(':', '')}`;
      await rename(file, aside);
      options.onSetAside?.(file, aside, error instanceof Error ? error.message : String(error));
    }
  }

  return {
    async append(file, events) {
      if (events.length === 0) return;
      // A folder made for the archive is as durable as the file before the rows are deleted.
      await makeDurableDirectory(path.dirname(file));
      await ensureIntact(file);
      const member = gzipSync(events.map((e) => `${JSON.stringify(e)}\n`).join(''));
      const sizeBefore = await stat(file).then(
        (s) => s.size,
        () => undefined,
      );
      const handle = await open(file, 'a');
      try {
        await handle.writeFile(member);
        await handle.sync();
      } catch (error) {
        // Leave no half member behind: the caller rolls back, and its retry appends the rows again.
        await handle.close().catch(() => {});
        if (sizeBefore !== undefined) await truncate(file, sizeBefore).catch(() => {});
        throw error;
      }
      await handle.close();
      // The new file's name must be durable too, not only its bytes.
      if (sizeBefore === undefined) await syncDirectory(path.dirname(file));
    },
  };
}

/**
 * gunzip stops without an error at zero bytes after a member (it takes them for padding), so a
 * file a crash grew without writing its data reads as whole. It is not: what follows the zeros is
 * never read. `bytesWritten` is what gunzip consumed; less than the file means such a tail.
 */
function unreadTail(fileBytes: number, gunzip: Gunzip): string | undefined {
  if (gunzip.bytesWritten >= fileBytes) return undefined;
  return `${fileBytes - gunzip.bytesWritten} bytes after the last whole gzip member (at byte ${gunzip.bytesWritten}) cannot be read`;
}

function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}

/** Reads an archive file back, line by line; a torn tail surfaces as an error after the readable lines. */
export async function* readArchive(file: string): AsyncGenerator<ArchivedEvent> {
  // pipeline, not .pipe(): a file that cannot be read (missing, a directory) must fail the
  // iteration below, not emit an 'error' nobody listens to (which ended the process).
  const gunzip = createGunzip();
  const source = createReadStream(file);
  pipelineWithCallback(source, gunzip, () => {});
  const lines = createInterface({ input: gunzip, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  try {
    for await (const line of lines) {
      number += 1;
      if (line.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = parseJsonText(line);
      } catch {
        throw new ArchiveFormatError(file, number, 'not JSON');
      }
      const event = archivedEventSchema.safeParse(parsed);
      if (!event.success) throw new ArchiveFormatError(file, number, event.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      yield event.data;
    }
    const tail = unreadTail(source.bytesRead, gunzip);
    if (tail !== undefined) throw new ArchiveFormatError(file, number + 1, tail);
  } catch (error) {
    if (error instanceof ArchiveFormatError || (error as NodeJS.ErrnoException).syscall !== undefined) throw error;
    throw new ArchiveFormatError(file, number + 1, `cannot decompress (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    // A reader that stopped early (restore --print | head) leaves no file open behind it.
    gunzip.destroy();
  }
}
