import type { CAC } from 'cac';
import type { CommandContext } from '../context.ts';
import { exitCodes } from '../exit-codes.ts';
import { plural, toJson } from '../output.ts';
import { MAX_BATCH_SIZE, parseCount, parseDuration } from '../parse.ts';
import type { Register } from './types.ts';

interface SweepFlags {
  olderThan?: unknown;
  limit?: unknown;
  json?: boolean;
}

async function sweep(context: CommandContext, flags: SweepFlags): Promise<number> {
  const olderThanSeconds = flags.olderThan === undefined ? undefined : parseDuration(flags.olderThan, '--older-than') / 1000;
  const limit = flags.limit === undefined ? undefined : parseCount(flags.limit, '--limit', MAX_BATCH_SIZE);
  const { sweepPendingEvents } = await import('../../operations/sweep-pending-events.ts');
  const result = await context.withDatabase({ boss: true }, ({ handle, boss }, config) =>
    sweepPendingEvents(
      { db: handle.db, boss: boss!, clock: context.runtime.now },
      { olderThanSeconds: olderThanSeconds ?? config.operations.sweepPendingOlderThanSeconds, limit: limit ?? config.operations.sweepBatchSize },
    ),
  );
  if (flags.json) context.runtime.stdout.write(toJson(result));
  else {
    context.print(`${plural(result.considered, 'pending event')} past the age limit; ${result.requeued} had no job and ${result.requeued === 1 ? 'was' : 'were'} queued again.`);
    if (result.considered > result.requeued) context.print(`${result.considered - result.requeued} still have a live job (waiting, retrying or running) and were left alone.`);
  }
  return exitCodes.ok;
}

export const registerSweep: Register = (cli: CAC, run) => {
  cli
    .command('sweep', 'Run one sweep now: re-queue pending events whose job was lost (the cron does this every 5 minutes)')
    .option('--older-than <duration>', 'Pending at least this long (default SWEEP_PENDING_OLDER_THAN_SECONDS, 300 s)')
    .option('--limit <n>', 'At most this many, oldest first (default SWEEP_BATCH_SIZE, 500)')
    .option('--json', 'Machine-readable output')
    .action((flags: SweepFlags) => run((context) => sweep(context, flags)));
};
