import type { CAC } from 'cac';
import { PartialResultError } from '../../operations/errors.ts';
import type { EventVerification, VerifyDeps } from '../../operations/verify-events.ts';
import { describeProof, describeSecretMatch } from '../../gateways/shared/proof.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { partialResult } from '../failure.ts';
import { plural, toJson } from '../output.ts';
import { parseCount, parseInstant, requiredText } from '../parse.ts';
import type { Register } from './types.ts';

interface VerifyFlags {
  since?: unknown;
  provider?: unknown;
  json?: boolean;
}

function nowText(result: EventVerification): string {
  const now = result.now;
  if (now.outcome === 'matches') {
    if (now.secret === null) return 'still verifies (no configured secret involved)';
    return `still verifies: ${describeSecretMatch(now.secret)}${now.by === 'fingerprint' ? ", by the token's fingerprint" : ''}`;
  }
  if (now.outcome === 'no_match') return `NO configured secret matches now: ${now.reason}`;
  return `cannot be checked: ${now.reason}`;
}

function render(result: EventVerification): string[] {
  return [
    `#${result.id}  ${result.provider}  ${result.eventId}  ${result.eventType}  received ${result.receivedAt.toISOString()}`,
    `  at receipt  ${result.proof ? describeProof(result.proof) : '-'}`,
    `  now         ${nowText(result)}`,
  ];
}

interface Tally {
  matches: number;
  noMatch: number;
  notCheckable: number;
}

const checked = (tally: Tally) => tally.matches + tally.noMatch + tally.notCheckable;

function summary(tally: Tally): string {
  return `${plural(checked(tally), 'event')}: ${tally.matches} still verify, ${tally.noMatch} verify with NO configured secret, ${tally.notCheckable} cannot be checked.`;
}

async function verify(context: CommandContext, idArg: unknown, flags: VerifyFlags): Promise<number> {
  if ((idArg === undefined) === (flags.since === undefined)) throw usageError('give an inbox id, or --since <duration> (not both).');
  if (idArg !== undefined && flags.provider !== undefined) throw usageError('--provider goes with --since.');
  const id = idArg === undefined ? undefined : parseCount(idArg, 'the inbox id', Number.MAX_SAFE_INTEGER);
  const since = flags.since === undefined ? undefined : parseInstant(flags.since, '--since', context.now);
  const provider = flags.provider === undefined ? undefined : requiredText(flags.provider, '--provider');
  const [{ verifyEventById, verifyEventsSince }, { requireKnownProvider }] = await Promise.all([
    import('../../operations/verify-events.ts'),
    import('../known-provider.ts'),
  ]);
  const tally: Tally = { matches: 0, noMatch: 0, notCheckable: 0 };
  const results: EventVerification[] = [];
  const report = (result: EventVerification) => {
    if (result.now.outcome === 'matches') tally.matches += 1;
    else if (result.now.outcome === 'no_match') tally.noMatch += 1;
    else tally.notCheckable += 1;
    if (flags.json) results.push(result);
    else for (const line of render(result)) context.print(line);
  };
  const found = await context
    .withDatabase({ boss: false }, async ({ handle }, config) => {
      const deps: VerifyDeps = { db: handle.db, driverFor: (name) => config.providers.get(name)?.driver };
      if (id !== undefined) {
        const result = await verifyEventById(deps, id);
        if (result) report(result);
        return result !== undefined;
      }
      if (provider !== undefined) await requireKnownProvider(handle.db, config, provider, '--provider');
      for await (const result of verifyEventsSince(deps, { since: since!, provider })) report(result);
      return true;
    })
    .catch((error: unknown) => {
      // The events checked before the failure are an answer too: the partial, as a finished run prints it
      // (without --json their lines are out already; the summary of them follows).
      if (checked(tally) === 0) throw error;
      throw partialResult(new PartialResultError(error, { events: results, summary: tally }), () => [summary(tally)]);
    });
  if (!found) {
    if (flags.json) context.runtime.stdout.write(toJson(null));
    context.notice(`no event with inbox id ${id} (purged? \`inboxctl restore FILE\` brings an archived one back with its proof).`);
    return exitCodes.attention;
  }
  if (flags.json) context.runtime.stdout.write(toJson({ events: results, summary: tally }));
  else context.print(summary(tally));
  return tally.noMatch > 0 ? exitCodes.attention : exitCodes.ok;
}

export const registerVerify: Register = (cli: CAC, run) => {
  cli
    .command('verify [id]', 'Check stored events again against the secrets configured now: which secret position still matches, or none (exit 1)')
    .option('--since <time>', 'Every event received since: a duration ago (72h, 30d) or an ISO-8601 time')
    .option('--provider <provider>', 'With --since: only this provider')
    .option('--json', 'Machine-readable output')
    .example('inboxctl verify 4711')
    .example('inboxctl verify --since 30d --provider stripe')
    .action((id: unknown, flags: VerifyFlags) => run((context) => verify(context, id, flags)));
};
