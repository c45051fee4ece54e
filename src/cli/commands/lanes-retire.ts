import type { RetirementSummary } from '../../delivery/retire-destination.ts';
import type { CommandContext } from '../context.ts';
import { CliError, exitCodes, usageError } from '../exit-codes.ts';
import { plural, toJson } from '../output.ts';
import { requiredText } from '../parse.ts';

export interface RetireFlags {
  reason?: unknown;
  by?: unknown;
  dryRun?: boolean;
  json?: boolean;
}

function whatIsCleared(summary: RetirementSummary): string {
  const parked = summary.parkedLanes > 0 ? ` (${summary.parkedLanes} parked)` : '';
  return `${plural(summary.lanes, 'lane')}${parked}, ${plural(summary.jobs, 'queued job')}${summary.hadState ? ', its start, backoff and disabled state' : ''}`;
}

/**
 * `lanes retire <destination> --reason <text> [--by <who>]`: forgets a destination removed from
 * the configuration (its lanes, jobs and state), in one transaction, recording who and why. A
 * destination still configured here is refused: its workers would start it again.
 */
export async function retire(context: CommandContext, destinationArg: unknown, flags: RetireFlags): Promise<number> {
  if (destinationArg === undefined) throw usageError('lanes retire needs a destination: inboxctl lanes retire <destination> --reason <text>.');
  if (flags.reason === undefined) throw usageError('retire needs --reason <text>: why the destination is retired (it is recorded).');
  const destination = requiredText(destinationArg, 'the destination');
  const reason = requiredText(flags.reason, '--reason');
  const by = flags.by === undefined ? (context.runtime.user?.() ?? 'unknown') : requiredText(flags.by, '--by');
  const dryRun = flags.dryRun === true;
  const { lastRetirement, retireDestination } = await import('../../delivery/retire-destination.ts');
  const outcome = await context.withDatabase({ boss: true }, async ({ handle, boss }, config) => {
    if (config.destinations.some((d) => d.name === destination)) {
      throw usageError(
        `refused, nothing changed: "${destination}" is configured here (DESTINATION_URL_${destination.toUpperCase().replaceAll('-', '_')}); remove it from every instance's configuration first, then retire it.`,
      );
    }
    const summary = await retireDestination({ db: handle.db, boss: boss! }, destination, { by, reason }, { dryRun });
    const cleared = summary.lanes > 0 || summary.jobs > 0 || summary.hadState;
    return { summary, cleared, previous: cleared ? undefined : await lastRetirement(handle.db, destination) };
  });
  const { summary, cleared, previous } = outcome;
  if (flags.json)
    context.runtime.stdout.write(toJson({ destination, ...summary, retired: cleared && !dryRun, by, reason, dryRun, lastRetirement: previous ?? null }));
  if (!cleared) {
    const before = previous ? ` (retired ${previous.retiredAt.toISOString()} by ${previous.by}: "${previous.reason}")` : '';
    throw new CliError(exitCodes.attention, `nothing to retire: the database holds no lane, job or state of destination "${destination}"${before}.`, {
      code: 'nothing_to_retire',
    });
  }
  if (!flags.json) {
    context.print(`${destination}: ${dryRun ? 'would clear' : 'retired; cleared'} ${whatIsCleared(summary)} (by ${by}: "${reason}").`);
    if (dryRun) context.print('Dry run: nothing changed.');
  }
  return exitCodes.ok;
}
