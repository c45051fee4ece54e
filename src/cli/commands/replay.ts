import type { CAC } from 'cac';
import type { ReplayResult } from '../../operations/replay-events.ts';
import { replayableStatuses } from '../../operations/statuses.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { partialResult } from '../failure.ts';
import { plural, toJson } from '../output.ts';
import { listOption, MAX_BATCH_SIZE, oneOf, parseCount, parseInstant, requiredText } from '../parse.ts';
import type { Register } from './types.ts';

interface ReplayFlags {
  status?: unknown;
  since?: unknown;
  until?: unknown;
  eventId?: unknown;
  account?: unknown;
  dryRun?: boolean;
  batchSize?: unknown;
  json?: boolean;
}

/** Why a named event was not replayed, and what would replay it: an id that exists must not read as a wrong one. */
function whyNotMatched(result: ReplayResult, status: string | null): string {
  if (status === null) return `no ${result.provider} event has this id.`;
  if (!(replayableStatuses as readonly string[]).includes(status))
    return `exists, status ${status}; a replay takes ${replayableStatuses.join(' or ')} events only.`;
  if (!(result.statuses as readonly string[]).includes(status)) return `exists, status ${status}; \`--status ${status}\` replays it.`;
  // Its status was asked for, so the received-at window left it out.
  return `exists, status ${status}; received outside --since/--until.`;
}

function describe(result: ReplayResult): string[] {
  const statuses = Object.entries(result.byStatus)
    .map(([status, n]) => `${status}: ${n}`)
    .join(', ');
  const lines = [`${result.provider}: ${plural(result.matched, 'event')} matched (status ${result.statuses.join(' or ')}${statuses ? `; ${statuses}` : ''}).`];
  for (const { eventId, status } of result.notMatched ?? []) lines.push(`  ${eventId}: ${whyNotMatched(result, status)}`);
  if (result.matched === 0) return lines;
  const shown = result.sampleEventIds.join(', ') + (result.matched > result.sampleEventIds.length ? ', …' : '');
  lines.push(`  oldest first: ${shown}`);
  lines.push(
    result.dryRun
      ? `Dry run: nothing changed (the handlers ran in a transaction that was rolled back; no job queued). Without --dry-run these go back to pending and are queued at once.`
      : `${plural(result.replayed, 'event')} back to pending and queued. Watch them with \`inboxctl stats --provider ${result.provider}\`.`,
  );
  return lines;
}

async function replay(context: CommandContext, providerArg: unknown, flags: ReplayFlags): Promise<number> {
  const provider = requiredText(providerArg, 'the provider');
  const statuses = oneOf(listOption(flags.status, '--status'), replayableStatuses, '--status');
  const eventIds = listOption(flags.eventId, '--event-id');
  const filter = {
    provider,
    statuses: statuses.length > 0 ? statuses : undefined,
    since: flags.since === undefined ? undefined : parseInstant(flags.since, '--since', context.now),
    until: flags.until === undefined ? undefined : parseInstant(flags.until, '--until', context.now),
    eventIds: eventIds.length > 0 ? eventIds : undefined,
    account: flags.account === undefined ? undefined : requiredText(flags.account, '--account'),
  };
  if (filter.since && filter.until && filter.since >= filter.until) throw usageError('--since must be before --until.');
  const batchSize = flags.batchSize === undefined ? undefined : parseCount(flags.batchSize, '--batch-size', MAX_BATCH_SIZE);
  const [{ replayEvents }, { requireKnownProvider }] = await Promise.all([import('../../operations/replay-events.ts'), import('../known-provider.ts')]);
  const { result, prediction } = await context.withDatabase({ boss: true }, async ({ handle, boss }, config) => {
    await requireKnownProvider(handle.db, config, provider);
    const replayed = await replayEvents({ db: handle.db, boss: boss! }, filter, { dryRun: flags.dryRun === true, batchSize }).catch((error: unknown) => {
      throw partialResult(error, describe);
    });
    if (!replayed.dryRun) return { result: replayed, prediction: undefined };
    // What the replay would do, not only which events: the workers' handlers, rolled back.
    const { predictReplay } = await import('../../processing/predict-replay.ts');
    return { result: replayed, prediction: await predictReplay(handle.db, boss!, config, filter, replayed.statuses) };
  });
  if (flags.json) context.runtime.stdout.write(toJson(prediction ? { ...result, prediction } : result));
  else {
    for (const line of describe(result)) context.print(line);
    if (prediction) for (const line of (await import('./replay-prediction.ts')).describePrediction(prediction)) context.print(line);
  }
  return exitCodes.ok;
}

export const registerReplay: Register = (cli: CAC, run) => {
  cli
    .command('replay <provider>', 'Put failed (or ignored) events back to pending and queue them now')
    .option('--status <status>', `Which rows: ${replayableStatuses.join(' | ')}; repeat or comma-separate for both (default: failed)`)
    .option('--since <time>', 'Received at or after: ISO-8601 time, or a duration ago (2h, 7d)')
    .option('--until <time>', 'Received before: ISO-8601 time, or a duration ago')
    .option('--event-id <id>', 'Only this event (the gateway id); repeatable', { type: [String] })
    .option('--account <id>', 'Only the events of this gateway account (a Stripe Connect acct_…)')
    .option('--batch-size <n>', 'Rows per transaction (default 500)')
    .option('--dry-run', 'Run the handlers on them in a rolled-back transaction: per event the outcome, per payment the status now and after; change nothing')
    .option('--json', 'Machine-readable output')
    .example('inboxctl replay stripe --status failed --since 2026-12-01T14:00:00Z --dry-run')
    .action((provider: unknown, flags: ReplayFlags) => run((context) => replay(context, provider, flags)));
};
