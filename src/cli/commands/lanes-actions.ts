import type { LaneRef } from '../../delivery/lane-operations.ts';
import type { CommandContext } from '../context.ts';
import { CliError, exitCodes, usageError } from '../exit-codes.ts';
import { plural, toJson } from '../output.ts';
import { requiredText } from '../parse.ts';
import { retire } from './lanes-retire.ts';

export const laneActions = ['retry', 'skip', 'enable', 'retire'] as const;
type LaneAction = (typeof laneActions)[number];

export interface LaneActionFlags {
  reason?: unknown;
  by?: unknown;
  dryRun?: boolean;
  json?: boolean;
}

/** A configured destination's name: a typo is a usage error naming the configured ones. */
function knownDestination(names: readonly string[], value: unknown): string {
  const name = requiredText(value, 'the destination');
  if (!names.includes(name)) throw usageError(`no destination "${name}" is configured here (${names.length === 0 ? 'none' : names.join(', ')}).`);
  return name;
}

/** `<provider>:<charge id>`: the payment the lane carries (a charge id may itself hold colons). */
function paymentRef(value: unknown): { provider: string; chargeId: string } {
  const text = requiredText(value, 'the payment (<provider>:<charge id>)');
  const colon = text.indexOf(':');
  if (colon <= 0 || colon === text.length - 1) throw usageError(`"${text}" is not <provider>:<charge id> (e.g. stripe:ch_3Mml…).`);
  return { provider: text.slice(0, colon), chargeId: text.slice(colon + 1) };
}

async function laneChange(context: CommandContext, action: 'retry' | 'skip', destinationArg: unknown, laneArg: unknown, flags: LaneActionFlags) {
  if (action === 'skip' && flags.reason === undefined) throw usageError('skip needs --reason <text>: why the event is given up (it is recorded on the lane).');
  const reason = action === 'skip' ? requiredText(flags.reason, '--reason') : undefined;
  if (action === 'retry' && flags.reason !== undefined) throw usageError('--reason belongs to skip; retry needs none.');
  const dryRun = flags.dryRun === true;
  const operations = await import('../../delivery/lane-operations.ts');
  try {
    return await context.withDatabase({ boss: true }, async ({ handle, boss }, config) => {
      const lane: LaneRef = {
        destination: knownDestination(
          config.destinations.map((d) => d.name),
          destinationArg,
        ),
        ...paymentRef(laneArg),
      };
      const deps = { db: handle.db, boss: boss! };
      const ref = `${lane.destination} ${lane.provider}:${lane.chargeId}`;
      const [destination] = await operations.describeDestinations(handle.db, [lane.destination]);
      // The run is queued either way, but a disabled destination's runs send nothing: say so, or the
      // operator waits for events that only `lanes enable` lets through.
      const destinationDisabled = destination?.disabledAt != null;
      const disabledNote = destinationDisabled
        ? `\nThe destination is DISABLED (${destination!.disabledReason ?? 'no reason'}): nothing is sent to it until \`inboxctl lanes enable ${lane.destination}\`.`
        : '';
      if (action === 'retry') {
        const result = await operations.retryLane(deps, lane, { dryRun });
        const unparked = result.wasParked ? (dryRun ? 'would be unparked' : 'unparked') : 'not parked';
        // A caught-up lane has no next event: "from event 3" of a payment of two would name one that does not exist.
        const caughtUp = result.deliveredSequence >= result.lastSequence;
        const from = caughtUp
          ? `caught up, ${result.deliveredSequence}/${result.lastSequence} delivered: nothing to send`
          : `from event ${result.deliveredSequence + 1}`;
        return {
          lane,
          ...result,
          destinationDisabled,
          dryRun,
          message: `${ref}: ${unparked}, attempts from zero, a run ${dryRun ? '' : 'is '}queued now (${from}).${caughtUp ? '' : disabledNote}`,
        };
      }
      const result = await operations.skipLaneEvent(deps, lane, reason!, { dryRun });
      const skipped = `event ${result.skippedSequence} (${result.eventId})`;
      return {
        lane,
        ...result,
        destinationDisabled,
        dryRun,
        message: dryRun
          ? `${ref}: ${skipped} would be skipped ("${reason}"), the lane unparked and its later events queued.${disabledNote}`
          : `${ref}: ${skipped} skipped ("${reason}"), the lane is unparked and its later events queued.${disabledNote}`,
      };
    });
  } catch (error) {
    if (error instanceof operations.LaneNotFoundError) {
      // --json output is always JSON: no such lane is null (as `show --json` prints for no such event), the reason on stderr.
      if (flags.json) context.runtime.stdout.write(toJson(null));
      throw new CliError(exitCodes.attention, error.message);
    }
    if (error instanceof operations.LaneNotParkedError) throw new CliError(exitCodes.usage, `refused, nothing changed: ${error.message}`, { cause: error });
    throw error;
  }
}

function enableMessage(destination: string, result: { wasDisabled: boolean; lanesQueued: number }, dryRun: boolean): string {
  if (!result.wasDisabled) return `${destination}: was not disabled; nothing ${dryRun ? 'to change' : 'changed'}.`;
  const lanes = `${plural(result.lanesQueued, 'lane')} with events left`;
  if (!dryRun) return `${destination}: enabled; ${lanes} ${result.lanesQueued === 1 ? 'is' : 'are'} queued.`;
  return `${destination}: would be enabled; ${lanes} would be queued.`;
}

async function enable(context: CommandContext, destinationArg: unknown, dryRun: boolean) {
  const { enableDestination } = await import('../../delivery/lane-operations.ts');
  return context.withDatabase({ boss: true }, async ({ handle, boss }, config) => {
    const destination = knownDestination(
      config.destinations.map((d) => d.name),
      destinationArg,
    );
    const result = await enableDestination({ db: handle.db, boss: boss! }, destination, { dryRun });
    return { destination, ...result, dryRun, message: enableMessage(destination, result, dryRun) };
  });
}

/** An argument not given at all is named as missing, with the command's usage (an empty one is called empty by requiredText). */
function missingArguments(action: LaneAction, destinationArg: unknown, laneArg: unknown): string | undefined {
  if (action === 'enable') return destinationArg === undefined ? 'lanes enable needs a destination: inboxctl lanes enable <destination>.' : undefined;
  if (destinationArg !== undefined && laneArg !== undefined) return undefined;
  return `lanes ${action} needs a destination and a payment: inboxctl lanes ${action} <destination> <provider>:<charge id>.`;
}

/** `lanes retry | skip | enable | retire`: an operator's change to one lane or destination, in one transaction with the jobs it queues. */
export async function runLaneAction(
  context: CommandContext,
  action: LaneAction,
  destinationArg: unknown,
  laneArg: unknown,
  flags: LaneActionFlags,
): Promise<number> {
  if ((action === 'enable' || action === 'retire') && laneArg !== undefined) throw usageError(`${action} takes a destination only.`);
  if (action !== 'retire' && flags.by !== undefined) throw usageError('--by belongs to retire.');
  if (action === 'retire') return retire(context, destinationArg, flags);
  const missing = missingArguments(action, destinationArg, laneArg);
  if (missing) throw usageError(missing);
  const { message, ...result } =
    action === 'enable' ? await enable(context, destinationArg, flags.dryRun === true) : await laneChange(context, action, destinationArg, laneArg, flags);
  if (flags.json) context.runtime.stdout.write(toJson(result));
  else {
    context.print(message);
    if (result.dryRun) context.print('Dry run: nothing changed.');
  }
  return exitCodes.ok;
}
