import type { CAC } from 'cac';
import type { CommandContext } from '../context.ts';
import { exitCodes } from '../exit-codes.ts';
import { plural, toJson } from '../output.ts';
import { MAX_BATCH_SIZE, parseCount, parseDuration } from '../parse.ts';
import type { Register } from './types.ts';

interface SweepFlags {
  olderThan?: unknown;
  limit?: unknown;
  dryRun?: boolean;
  json?: boolean;
}

async function sweep(context: CommandContext, flags: SweepFlags): Promise<number> {
  const olderThanSeconds = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan, '--older-than') / 1000;
  const limit = flags.limit === undefined ? undefined : parseCount(flags.limit, '--limit', MAX_BATCH_SIZE);
  const { sweepPendingEvents } = await import('../../operations/sweep-pending-events.ts');
  const dryRun = flags.dryRun === true;
  const result = await context.withDatabase({ boss: true }, ({ handle, boss }, config) =>
    sweepPendingEvents(
      { db: handle.db, boss: boss!, clock: context.runtime.now },
      { olderThanSeconds: olderThanSeconds ?? config.operations.sweepPendingOlderThanSeconds, limit: limit ?? config.operations.sweepBatchSize, dryRun },
    ),
  );
  if (flags.json) context.runtime.stdout.write(toJson(result));
  else {
    const n = result.withoutJob;
    const outcome = dryRun ? `${n === 1 ? 'has' : 'have'} no job and would be queued again` : `had no job and ${n === 1 ? 'was' : 'were'} queued again`;
    context.print(`${plural(result.considered, 'pending event')} past the age limit; ${n} ${outcome}.`);
    const alive = result.considered - n;
    if (alive > 0)
      context.print(
        `${alive} still ${alive === 1 ? 'has' : 'have'} a live job (waiting, retrying or running) and ${dryRun ? 'would be' : alive === 1 ? 'was' : 'were'} left alone.`,
      );
    if (dryRun) context.print('Dry run: nothing changed (no job queued).');
  }
  return exitCodes.ok;
}

export const registerSweep: Register = (cli: CAC, run) => {
  cli
    .command('sweep', 'Run one sweep now: re-queue pending events whose job was lost (the cron does this every 5 minutes)')
    .option('--older-than <duration>', 'Pending at least this long (default SWEEP_PENDING_OLDER_THAN_SECONDS, 300 s)')
    .option('--limit <n>', 'At most this many, oldest first (default SWEEP_BATCH_SIZE, 500)')
    .option('--dry-run', 'Say which pending events have no job; queue nothing')
    .option('--json', 'Machine-readable output')
    .action((flags: SweepFlags) => run((context) => sweep(context, flags)));
};
