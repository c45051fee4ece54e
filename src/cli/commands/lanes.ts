import type { CAC } from 'cac';
import type { DestinationView, LaneView } from '../../delivery/lane-operations.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { formatDuration } from '../../format/duration.ts';
import { plural, table, toJson } from '../output.ts';
import { MAX_BATCH_SIZE, parseCount, requiredText, singleValue } from '../parse.ts';
import type { Register } from './types.ts';
import { type LaneActionFlags, laneActions, runLaneAction } from './lanes-actions.ts';

interface LanesFlags extends LaneActionFlags {
  parked?: boolean;
  account?: unknown;
  limit?: unknown;
  json?: boolean;
}

function destinationLine(d: DestinationView, now: Date): string {
  const state = d.disabledAt
    ? `DISABLED since ${d.disabledAt.toISOString()} (${d.disabledReason ?? 'no reason'}); \`inboxctl lanes enable ${d.name}\` takes it back`
    : d.backoffUntil
      ? `backing off as a whole for ${formatDuration((d.backoffUntil.getTime() - now.getTime()) / 1000)} (many lanes failing)`
      : 'ok';
  return `${d.name}: ${state}; ${plural(d.behindLanes, 'lane')} behind, ${plural(d.parkedLanes, 'parked lane')}`;
}

/**
 * A lane's state and when it moves next. Nothing is sent to a disabled (410) destination, so its
 * lanes not parked are held until `lanes enable`, whatever their attempts say; a parked one still
 * needs its own retry or skip as well.
 */
function laneRow(lane: LaneView, disabledDestinations: ReadonlySet<string>, now: Date): string[] {
  const held = !lane.parkedAt && disabledDestinations.has(lane.destination);
  const state = lane.parkedAt ? 'PARKED' : held ? 'held' : lane.attempts > 0 ? 'retrying' : 'sending';
  const when = lane.parkedAt
    ? `${formatDuration((now.getTime() - lane.parkedAt.getTime()) / 1000)} ago`
    : held
      ? 'until `lanes enable`'
      : lane.nextAttemptAt
        ? `next in ${formatDuration((lane.nextAttemptAt.getTime() - now.getTime()) / 1000)}`
        : '-';
  return [
    state,
    lane.destination,
    `${lane.provider}:${lane.chargeId}`,
    `${lane.deliveredSequence}/${lane.lastSequence}`,
    String(lane.attempts),
    when,
    lane.lastError ?? '-',
  ];
}

async function listLanesCommand(context: CommandContext, flags: LanesFlags): Promise<number> {
  const limit = flags.limit === undefined ? 100 : parseCount(flags.limit, '--limit', MAX_BATCH_SIZE);
  const { describeDestinations, listLanes } = await import('../../delivery/lane-operations.ts');
  // One lane past the limit tells whether there are more than are listed (exactly `limit` lanes are not "more").
  const { destinations, listed } = await context.withDatabase({ boss: false }, async ({ handle }, config) => ({
    destinations: await describeDestinations(
      handle.db,
      config.destinations.map((d) => d.name),
    ),
    listed: await listLanes(handle.db, {
      parkedOnly: flags.parked === true,
      limit: limit + 1,
      account: flags.account === undefined ? undefined : requiredText(flags.account, '--account'),
    }),
  }));
  const lanes = listed.slice(0, limit);
  const moreLanes = listed.length > limit;
  // The lanes listed count too: a parked lane of a destination not configured here (removed, or a
  // shell without its variables) is in no destination's count. Parked lanes are listed first.
  const attention = destinations.some((d) => d.disabledAt !== null || d.parkedLanes > 0) || lanes.some((lane) => lane.parkedAt !== null);
  if (flags.json) {
    context.runtime.stdout.write(toJson({ destinations, lanes, moreLanes }));
    return attention ? exitCodes.attention : exitCodes.ok;
  }
  if (destinations.length === 0) context.print('No destination is configured (DESTINATION_URL_<NAME> + DESTINATION_SECRET_<NAME>).');
  for (const destination of destinations) context.print(destinationLine(destination, context.now));
  const configured = new Set(destinations.map((d) => d.name));
  for (const name of new Set(lanes.map((lane) => lane.destination).filter((d) => !configured.has(d)))) {
    context.print(`${name}: NOT CONFIGURED here, no worker sends its lanes; if it was removed: \`inboxctl lanes retire ${name} --reason <text>\``);
  }
  if (lanes.length === 0) context.print(flags.parked ? 'No parked lane.' : 'Every lane is caught up.');
  else {
    const disabledDestinations = new Set(destinations.filter((d) => d.disabledAt !== null).map((d) => d.name));
    context.print('');
    context.print(
      table(
        ['STATE', 'DESTINATION', 'PAYMENT', 'DELIVERED', 'ATTEMPTS', 'WHEN', 'LAST ERROR'],
        lanes.map((lane) => laneRow(lane, disabledDestinations, context.now)),
      ),
    );
    if (moreLanes) context.print(`(first ${limit}; --limit shows more)`);
  }
  return attention ? exitCodes.attention : exitCodes.ok;
}

async function lanes(context: CommandContext, actionArg: unknown, destinationArg: unknown, laneArg: unknown, flags: LanesFlags): Promise<number> {
  if (actionArg === undefined) {
    if (flags.dryRun) throw usageError('--dry-run belongs to retry, skip, enable and retire; listing changes nothing.');
    return listLanesCommand(context, flags);
  }
  const action = singleValue(actionArg, 'the action');
  if (!laneActions.includes(action as never)) throw usageError(`"${action}" is not one of ${laneActions.join(', ')} (or no action: list the lanes).`);
  return runLaneAction(context, action as (typeof laneActions)[number], destinationArg, laneArg, flags);
}

export const registerLanes: Register = (cli: CAC, run) => {
  cli
    .command(
      'lanes [action] [destination] [lane]',
      'Delivery lanes (destination, payment): list those behind or parked; retry | skip a parked one; enable a disabled destination; retire one no longer configured',
    )
    .option('--parked', 'Only parked lanes')
    .option('--account <id>', "Only the lanes of this gateway account's payments (a Stripe Connect acct_…)")
    .option('--limit <n>', 'At most this many lanes listed (default 100)')
    .option('--reason <text>', 'skip: why the event is given up (recorded on the lane); retire: why the destination is retired (recorded)')
    .option('--by <who>', 'retire: who retires it (recorded; default: the OS user)')
    .option('--dry-run', 'retry, skip, enable, retire: run the change and roll it back; say what it would do')
    .option('--json', 'Machine-readable output')
    .example('inboxctl lanes --parked')
    .example('inboxctl lanes retry orders stripe:ch_3MmlLrLkdIwHu7ix0snN0B15')
    .example('inboxctl lanes skip orders stripe:ch_3MmlLrLkdIwHu7ix0snN0B15 --reason "order deleted in the app"')
    .example('inboxctl lanes enable orders')
    .example('inboxctl lanes retire orders --reason "orders service decommissioned" --dry-run')
    .action((action: unknown, destination: unknown, lane: unknown, flags: LanesFlags) => run((context) => lanes(context, action, destination, lane, flags)));
};
