import { type FileHandle, open } from 'node:fs/promises';
import type { CAC } from 'cac';
import type { ArchivedEvent } from '../../operations/archive.ts';
import type { RestoreResult } from '../../operations/restore.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { partialAnswer } from '../failure.ts';
import { formatJsonText, objectFromJsonMembers } from '../../format/json-text.ts';
import { plural, toJson } from '../output.ts';
import type { Register } from './types.ts';

interface RestoreFlags {
  dryRun?: boolean;
  print?: boolean;
  json?: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One archived event for a reader, one JSON line: payload and fact as JSON, the raw body as text when it is UTF-8. */
function readable(event: ArchivedEvent): string {
  const { raw_body_base64, payload_json, fact_json, decision_detail_json, v: _v, ...rest } = event;
  const bytes = Buffer.from(raw_body_base64, 'base64');
  let body: [string, string];
  try {
    body = ['raw_body', JSON.stringify(utf8.decode(bytes))];
  } catch {
    body = ['raw_body_base64', JSON.stringify(raw_body_base64)];
  }
  const compact = (json: string) => formatJsonText(json, { indent: 0 });
  return objectFromJsonMembers(
    [
      ...Object.entries(rest).map(([key, value]) => [key, JSON.stringify(value)] as const),
      ['payload', compact(payload_json)],
      ['fact', fact_json == null ? 'null' : compact(fact_json)],
      ['decision_detail', decision_detail_json == null ? 'null' : compact(decision_detail_json)],
      body,
    ],
    0,
  );
}

async function printArchives(context: CommandContext, files: string[]): Promise<number> {
  const { readArchive } = await import('../../operations/archive.ts');
  for (const file of files) {
    for await (const event of readArchive(file)) {
      // The reader has gone (`| head`): the rest of the archive would be read for no one.
      if (context.runtime.stdout.closed) return exitCodes.ok;
      context.print(readable(event));
    }
  }
  return exitCodes.ok;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/** Every file is checked before the first is read, so a typo in the third leaves nothing half-restored. */
async function checkArchiveFile(file: string): Promise<void> {
  const problems: Record<string, string> = {
    ENOENT: 'no such file',
    EACCES: 'not readable (permission denied)',
    EISDIR: 'is a directory, not an archive file',
  };
  let head: Buffer;
  let bytesRead: number;
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    head = Buffer.alloc(2);
    ({ bytesRead } = await handle.read(head, 0, 2, 0));
  } catch (error) {
    // Only the file system's errors are answered here: each carries an errno code (ENOENT, …).
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined) throw error;
    throw usageError(`${file}: ${problems[code] ?? `cannot be read (${code})`}.`);
  } finally {
    await handle?.close();
  }
  if (bytesRead < 2 || head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) {
    throw usageError(`${file}: not a gzip file; inbox archives are the *.jsonl.gz files written by inboxctl purge and the retention job.`);
  }
}

/** A gzip file that is not an archive (its first line is no archived event) is refused up front, not found part-way. */
async function checkFirstEvent(file: string): Promise<void> {
  const { ArchiveFormatError, readArchive } = await import('../../operations/archive.ts');
  const events = readArchive(file);
  try {
    await events.next();
  } catch (error) {
    if (error instanceof ArchiveFormatError) throw usageError(error.message);
    throw error;
  } finally {
    await events.return(undefined);
  }
}

function describe(results: RestoreResult[]): string[] {
  return results.map(
    (r) =>
      `${r.file}: ${plural(r.read, 'event')} read, ${r.inserted} ${r.dryRun ? 'would be inserted' : 'inserted'}, ${r.skipped} already in the inbox (left as they are).`,
  );
}

async function restore(context: CommandContext, files: string[], flags: RestoreFlags): Promise<number> {
  if (files.length === 0) throw usageError('Name at least one archive file (e.g. .inbox/archive/stripe/stripe-2026-01-05.jsonl.gz).');
  for (const file of files) {
    await checkArchiveFile(file);
    await checkFirstEvent(file);
  }
  if (flags.print) return printArchives(context, files);
  const { restoreArchive } = await import('../../operations/restore.ts');
  const done: RestoreResult[] = [];
  await context.withDatabase({ boss: false }, async ({ handle }) => {
    for (const file of files) {
      try {
        done.push(await restoreArchive(handle.db, file, { dryRun: flags.dryRun === true }));
      } catch (error) {
        throw partialAnswer(error, done, describe);
      }
    }
  });
  if (flags.json) context.runtime.stdout.write(toJson(done));
  else {
    for (const line of describe(done)) context.print(line);
    if (flags.dryRun) context.print('Dry run: nothing changed.');
  }
  return exitCodes.ok;
}

export const registerRestore: Register = (cli: CAC, run) => {
  cli
    .command('restore [...files]', 'Read archive files back into the inbox (rows that exist are skipped), or print them')
    .option('--dry-run', 'Count what would be inserted; change nothing')
    .option('--print', 'Print the archived events as JSON lines (raw body as text when UTF-8); no database needed')
    .option('--json', 'Machine-readable output')
    .example('inboxctl restore .inbox/archive/stripe/stripe-2026-01-05.jsonl.gz --dry-run')
    .action((files: string[], flags: RestoreFlags) => run((context) => restore(context, files.map(String), flags)));
};
