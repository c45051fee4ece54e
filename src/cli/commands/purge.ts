import { access, constants } from 'node:fs/promises';
import type { CAC } from 'cac';
import { makeDurableDirectory } from '../../fs/durable-directory.ts';
import type { PurgeResult } from '../../operations/retention.ts';
import { type PurgeableStatus, retentionStatuses } from '../../operations/statuses.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { partialAnswer } from '../failure.ts';
import { plural, toJson } from '../output.ts';
import { MAX_BATCH_SIZE, parseCount, parseDuration, requiredText } from '../parse.ts';
import type { Register } from './types.ts';

interface PurgeFlags {
  olderThan?: unknown;
  provider?: unknown;
  archive?: unknown;
  includeFailed?: boolean;
  batchSize?: unknown;
  dryRun?: boolean;
  force?: boolean;
  json?: boolean;
}

function describe(results: PurgeResult[]): string[] {
  return results.flatMap(describeOne);
}

function describeOne(result: PurgeResult): string[] {
  const verb = result.dryRun ? 'would be archived and deleted' : 'archived and deleted';
  const lines = [
    `${result.provider}: ${plural(result.deleted, 'row')} received before ${result.cutoff.toISOString()} (${result.statuses.join(', ')}) ${verb}.`,
  ];
  for (const { file, rows } of result.files) lines.push(`  ${file}  ${plural(rows, 'row')}`);
  if (result.stopped) lines.push('  stopped before the end; run it again to continue.');
  return lines;
}

/** The archive folder must be writable before the first batch, not found unusable half-way. */
async function ensureWritableFolder(dir: string, setting: string): Promise<void> {
  try {
    await makeDurableDirectory(dir);
    await access(dir, constants.W_OK);
  } catch (error) {
    throw usageError(`${setting}: cannot write archive files to "${dir}" (${(error as NodeJS.ErrnoException).code ?? String(error)}).`);
  }
}

async function purge(context: CommandContext, flags: PurgeFlags): Promise<number> {
  if (flags.olderThan === undefined) throw usageError('--older-than is required (e.g. --older-than 30d).');
  const cutoff = new Date(context.now.getTime() - parseDuration(flags.olderThan, '--older-than'));
  const statuses: PurgeableStatus[] = flags.includeFailed ? [...retentionStatuses, 'failed'] : [...retentionStatuses];
  const batchSize = flags.batchSize === undefined ? undefined : parseCount(flags.batchSize, '--batch-size', MAX_BATCH_SIZE);
  const provider = flags.provider === undefined ? undefined : requiredText(flags.provider, '--provider');
  const archiveOption = flags.archive === undefined ? undefined : requiredText(flags.archive, '--archive');
  const [
    { createArchiveWriter },
    { checkPurgeCutoff, purgeEvents },
    { listStoredProviders },
    { drizzleExecutor },
    { requireKnownProvider, retentionPolicies },
  ] = await Promise.all([
    import('../../operations/archive.ts'),
    import('../../operations/retention.ts'),
    import('../../inbox/sql/counts.ts'),
    import('../../db/client.ts'),
    import('../known-provider.ts'),
  ]);
  const done: PurgeResult[] = [];
  await context.withDatabase({ boss: false }, async ({ handle }, config) => {
    if (provider !== undefined) await requireKnownProvider(handle.db, config, provider, '--provider');
    const stored = await listStoredProviders(drizzleExecutor(handle.db));
    const providers = provider === undefined ? stored : [provider];
    const { policies, notices } = retentionPolicies(
      config,
      stored.filter((name) => providers.includes(name)),
    );
    for (const notice of notices) context.notice(notice);
    // Every provider is checked before anything is deleted: a refusal leaves the inbox untouched.
    for (const name of providers) {
      for (const warning of checkPurgeCutoff(name, cutoff, context.now, policies, flags.force === true)) context.notice(`warning: ${warning}`);
    }
    const archiveDir = archiveOption ?? config.operations.archiveDir;
    if (flags.dryRun !== true) await ensureWritableFolder(archiveDir, archiveOption === undefined ? 'INBOX_ARCHIVE_DIR' : '--archive');
    const archive = createArchiveWriter({
      clock: context.runtime.now,
      onSetAside: (file, aside) => context.notice(`${file} was damaged; kept as ${aside}, a fresh file started`),
    });
    for (const name of providers) {
      try {
        done.push(await purgeEvents({ db: handle.db, archive }, { provider: name, cutoff, archiveDir, statuses, batchSize, dryRun: flags.dryRun === true }));
      } catch (error) {
        throw partialAnswer(error, done, describe);
      }
    }
  });
  if (flags.json) context.runtime.stdout.write(toJson(done));
  else {
    if (done.length === 0) context.print('The inbox is empty.');
    for (const line of describe(done)) context.print(line);
    if (flags.dryRun) context.print('Dry run: nothing changed.');
  }
  return exitCodes.ok;
}

export const registerPurge: Register = (cli: CAC, run) => {
  cli
    .command('purge', 'Archive (gzip JSON Lines, one file per provider per day), then delete, rows older than a cut-off')
    .option('--older-than <duration>', 'Cut-off as an age: 30d, 12h, … (required)')
    .option('--provider <name>', 'Only this provider (default: every provider in the inbox)')
    .option('--archive <dir>', 'Archive folder (default INBOX_ARCHIVE_DIR, else <INBOX_DATA_DIR>/archive)')
    .option('--include-failed', 'Also purge failed rows (pending rows are never purged)')
    .option('--batch-size <n>', 'Rows per transaction (default 500)')
    .option('--dry-run', 'Count what would be archived and deleted, per file; change nothing')
    .option('--force', "Allow a cut-off inside the provider's dedupe window (or a provider this configuration does not know)")
    .option('--json', 'Machine-readable output')
    .example('inboxctl purge --older-than 90d --provider stripe --dry-run')
    .action((flags: PurgeFlags) => run((context) => purge(context, flags)));
};
