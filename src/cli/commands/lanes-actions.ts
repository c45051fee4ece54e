import type { LaneRef } from '../../delivery/lane-operations.ts';
import type { CommandContext } from '../context.ts';
import { CliError, exitCodes, usageError } from '../exit-codes.ts';
import { toJson } from '../output.ts';
import { requiredText } from '../parse.ts';

export const laneActions = ['retry', 'skip', 'enable'] as const;
type LaneAction = (typeof laneActions)[number];

export interface LaneActionFlags {
  reason?: unknown;
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

async function laneChange(context: CommandContext, action: Exclude<LaneAction, 'enable'>, destinationArg: unknown, laneArg: unknown, flags: LaneActionFlags) {
  const reason = action === 'skip' ? requiredText(flags.reason, '--reason') : undefined;
  if (action === 'retry' && flags.reason !== undefined) throw usageError('--reason belongs to skip; retry needs none.');
  const operations = await import('../../delivery/lane-operations.ts');
  try {
    return await context.withDatabase({ boss: true }, async ({ handle, boss }, config) => {
      const lane: LaneRef = { destination: knownDestination(config.destinations.map((d) => d.name), destinationArg), ...paymentRef(laneArg) };
      const deps = { db: handle.db, boss: boss! };
      if (action === 'retry') {
        const result = await operations.retryLane(deps, lane);
        return { lane, ...result, message: `${lane.destination} ${lane.provider}:${lane.chargeId}: ${result.wasParked ? 'unparked' : 'not parked'}, attempts from zero, a run is queued now (from event ${result.deliveredSequence + 1}).` };
      }
      const result = await operations.skipLaneEvent(deps, lane, reason!);
      return { lane, ...result, message: `${lane.destination} ${lane.provider}:${lane.chargeId}: event ${result.skippedSequence} (${result.eventId}) skipped ("${reason}"), the lane is unparked and its later events queued.` };
    });
  } catch (error) {
    if (error instanceof operations.LaneNotFoundError) throw new CliError(exitCodes.attention, error.message);
    if (error instanceof operations.LaneNotParkedError) throw usageError(`refused, nothing changed: ${error.message}`);
    throw error;
  }
}

async function enable(context: CommandContext, destinationArg: unknown) {
  const { enableDestination } = await import('../../delivery/lane-operations.ts');
  return context.withDatabase({ boss: true }, async ({ handle, boss }, config) => {
    const destination = knownDestination(config.destinations.map((d) => d.name), destinationArg);
    const result = await enableDestination({ db: handle.db, boss: boss! }, destination);
    const message = result.wasDisabled ? `${destination}: enabled; ${result.lanesQueued} lanes with events left are queued.` : `${destination}: was not disabled; nothing changed.`;
    return { destination, ...result, message };
  });
}

/** `lanes retry | skip | enable`: an operator's change to one lane or destination, in one transaction with the jobs it queues. */
export async function runLaneAction(context: CommandContext, action: LaneAction, destinationArg: unknown, laneArg: unknown, flags: LaneActionFlags): Promise<number> {
  if (action === 'enable' && laneArg !== undefined) throw usageError('enable takes a destination only.');
  const { message, ...result } = action === 'enable' ? await enable(context, destinationArg) : await laneChange(context, action, destinationArg, laneArg, flags);
  if (flags.json) context.runtime.stdout.write(toJson(result));
  else context.print(message);
  return exitCodes.ok;
}
