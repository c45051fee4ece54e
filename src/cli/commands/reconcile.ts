import type { CAC } from 'cac';
import type { ConfiguredProvider } from '../../config/configured-providers.ts';
import type { GatewayLedger } from '../../gateways/shared/ledger.ts';
import type { ReconciliationIncompleteError, RunResult } from '../../reconciliation/reconcile.ts';
import { apiKeyEnvName } from '../../refetch/config-keys.ts';
import type { GatewayApiTarget } from '../../refetch/settings.ts';
import type { CommandContext } from '../context.ts';
import { providerAccount } from '../account-option.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { plural, toJson } from '../output.ts';
import { parsePastInstant, requiredText } from '../parse.ts';
import type { Register } from './types.ts';

interface ReconcileFlags {
  provider?: unknown;
  since?: unknown;
  payout?: unknown;
  account?: unknown;
  json?: boolean;
}

interface Target {
  configured: ConfiguredProvider;
  api: GatewayApiTarget;
  ledger: GatewayLedger;
}

/** The providers to reconcile: the one named, or every configured one whose gateway has a ledger and whose API key is set. */
function targetsOf(providers: ReadonlyMap<string, ConfiguredProvider>, ledgers: Readonly<Record<string, GatewayLedger>>, named: string | undefined): Target[] {
  const all = [...providers.values()];
  const target = (configured: ConfiguredProvider): Target | undefined => {
    const api = configured.refetch.api;
    const ledger = api && ledgers[api.gateway.name];
    return api && ledger ? { configured, api, ledger } : undefined;
  };
  if (named === undefined) {
    const targets = all.flatMap((configured) => target(configured) ?? []);
    if (targets.length === 0)
      throw usageError(
        `no configured provider has a gateway ledger and an API key to read it (ledgers: ${Object.keys(ledgers).join(', ')}; set GATEWAY_API_KEY_<PROVIDER>).`,
      );
    return targets;
  }
  const configured = providers.get(named);
  if (!configured) throw usageError(`no provider "${named}" is configured here (${all.map((p) => p.name).join(', ') || 'none'}).`);
  if (!configured.refetch.api) throw usageError(`provider "${named}" has no gateway API key: set ${apiKeyEnvName(named)} (or api.key in INBOX_CONFIG).`);
  const found = target(configured);
  if (!found)
    throw usageError(
      `the ${configured.refetch.api.gateway.name} API has no ledger this inbox can read; only ${Object.keys(ledgers).join(', ')} can be reconciled.`,
    );
  return [found];
}

function describeRun(result: RunResult): string[] {
  const { run } = result;
  const what = run.scope === 'payout' ? `payout ${run.payoutId}` : `${run.since.toISOString()} … ${run.until.toISOString()}`;
  const lines = [
    `${run.provider}${run.account === null ? '' : ` account ${run.account}`}: ${what}${result.resumed ? ` (run ${run.id} resumed where it stopped)` : ` (run ${run.id})`}, ${plural(run.pages, 'page')} read, ${plural(run.entriesRead, 'entry', 'entries')} (${run.entriesNew} new${run.unreadable > 0 ? `, ${run.unreadable} unreadable` : ''}).`,
    `  ${plural(result.findings.length, 'finding')} (${result.newFindings} new), ${result.resolved} resolved, ${plural(result.gatewayCalls, 'gateway call')}${result.rateLimitedWaits > 0 ? `, rate limited ${plural(result.rateLimitedWaits, 'time')} (waited out Retry-After)` : ''}`,
  ];
  return lines;
}

async function findingLines(results: readonly RunResult[]): Promise<string[]> {
  const { describeFinding } = await import('../../reconciliation/finding-text.ts');
  return results.flatMap((result) => result.findings.map((finding) => `  ${describeFinding(finding.evidence)}`));
}

/** The runs done, and the one that stopped part-way if one did (the providers after it are not read). */
interface Outcome {
  results: RunResult[];
  incomplete?: ReconciliationIncompleteError;
}

async function runAll(
  context: CommandContext,
  targets: Target[],
  flags: ReconcileFlags,
  since: Date | undefined,
  account: string | undefined,
): Promise<Outcome> {
  const [{ reconcile, ReconciliationIncompleteError }, { createRefetcher }, { isAccountDeauthorized }] = await Promise.all([
    import('../../reconciliation/reconcile.ts'),
    import('../../refetch/refetcher.ts'),
    import('../../refetch/account-access-sql.ts'),
  ]);
  const windowDays = (await context.config()).operations.reconcileWindowDays;
  return context.withDatabase({ boss: false }, async ({ handle }) => {
    // No read on behalf of an account that deauthorized the platform (gateway_account_access), as for backfill.
    const isDeauthorized = (provider: string, named: string) => isAccountDeauthorized(handle.db, provider, named);
    const refetcher = createRefetcher({ targets: targets.map((t) => t.api), clock: context.runtime.now, accountAccess: { isDeauthorized } });
    const results: RunResult[] = [];
    for (const { configured, ledger } of targets) {
      const scope =
        flags.payout !== undefined
          ? { kind: 'payout' as const, payoutId: requiredText(flags.payout, '--payout') }
          : { kind: 'window' as const, since: since ?? new Date(context.now.getTime() - windowDays * 86_400_000), until: context.now };
      const deps = {
        db: handle.db,
        provider: configured.name,
        account: account ?? null,
        ledger,
        get: (path: string) => refetcher.get(configured.name, path, undefined, account),
        isDeauthorized,
        clock: context.runtime.now,
        sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
        notice: context.notice,
        settlementDays: configured.settlementDays ?? ledger.defaultSettlementDays,
      };
      try {
        results.push(...(await reconcile(deps, scope)));
      } catch (error) {
        if (!(error instanceof ReconciliationIncompleteError)) throw error;
        return { results: [...results, ...error.done], incomplete: error };
      }
    }
    return { results };
  });
}

async function reconcileCommand(context: CommandContext, flags: ReconcileFlags): Promise<number> {
  if (flags.since !== undefined && flags.payout !== undefined) throw usageError('--since and --payout exclude each other: a payout lists its own entries.');
  const provider = flags.provider === undefined ? undefined : requiredText(flags.provider, '--provider');
  if (flags.payout !== undefined && provider === undefined) throw usageError('--payout needs --provider: a payout id belongs to one account.');
  if (flags.account !== undefined && provider === undefined) throw usageError("--account needs --provider: an account is one provider's.");
  if (flags.payout !== undefined && requiredText(flags.payout, '--payout').length > 150) throw usageError('--payout: a payout id is at most 150 characters.');
  const since = flags.since === undefined ? undefined : parsePastInstant(flags.since, '--since', context.now);
  const config = await context.config();
  const { gatewayLedgers } = await import('../../gateways/registry.ts');
  const targets = targetsOf(config.providers, gatewayLedgers, provider);
  const account = provider === undefined ? undefined : providerAccount(targets[0]!.api, provider, flags.account);
  if (flags.payout !== undefined && !targets[0]!.ledger.payouts)
    throw usageError(`the ${targets[0]!.ledger.gateway} ledger has no payouts that list their entries; reconcile it by --since.`);
  const { results, incomplete } = await runAll(context, targets, flags, since, account).catch(async (error: unknown) => {
    const { AccountDeauthorizedError } = await import('../../refetch/errors.ts');
    // Refused before any call or run, like an account the provider does not have: running again would not read it either.
    if (error instanceof AccountDeauthorizedError) throw usageError(`${error.message} Nothing was read or recorded.`);
    throw error;
  });
  if (incomplete) {
    const [{ OperationIncompleteError, PartialResultError }, { partialResult }] = await Promise.all([
      import('../../operations/errors.ts'),
      import('../failure.ts'),
    ]);
    const { stopped } = incomplete;
    const lines = [
      ...results.flatMap(describeRun),
      ...(await findingLines(results)),
      `${stopped.provider}: run ${stopped.id} stopped after ${plural(stopped.pages, 'page')} and is kept as partial: run inboxctl reconcile again to resume it there.`,
    ];
    // Told like every operation that stops part-way (exit 4, operation_incomplete), naming the run kept.
    const progress = `${stopped.provider} run ${stopped.id}: ${plural(stopped.pages, 'page')} read, ${plural(stopped.entriesRead, 'entry', 'entries')}`;
    throw partialResult(
      new PartialResultError(new OperationIncompleteError('reconciliation', progress, incomplete.cause), { runs: results, stopped }),
      () => lines,
    );
  }
  const findings = results.reduce((n, r) => n + r.findings.length, 0);
  if (flags.json) context.runtime.stdout.write(toJson({ runs: results }));
  else {
    for (const line of results.flatMap(describeRun)) context.print(line);
    for (const line of await findingLines(results)) context.print(line);
    context.print(
      findings === 0
        ? 'Everything read matches: no finding.'
        : `${plural(findings, 'finding')}: each is kept in reconciliation_findings (dashboard: Findings) until a run finds it no longer true.`,
    );
  }
  // Findings need a human (a cron's `|| alert`); the run itself is done.
  return findings > 0 ? exitCodes.attention : exitCodes.ok;
}

export const registerReconcile: Register = (cli: CAC, run) => {
  cli
    .command('reconcile', 'Check the payments against the money the gateway settled (its ledger), and record what differs as findings')
    .option('--provider <name>', 'One provider (default: every provider with a ledger and an API key)')
    .option('--since <time>', 'Ledger entries created at or after: a duration ago (7d) or an ISO-8601 time (default: RECONCILE_WINDOW_DAYS, 7d)')
    .option('--payout <id>', "One payout's entries, and whether they add up to it (Stripe; needs --provider)")
    .option(
      '--account <id>',
      "One account's ledger, read on its behalf: a Connect account (Stripe-Account) or an Asaas subaccount of INBOX_CONFIG accounts (its own API key); needs --provider (default: the provider's own)",
    )
    .option('--json', 'Machine-readable output')
    .example('inboxctl reconcile --provider stripe --since 7d')
    .action((flags: ReconcileFlags) => run((context) => reconcileCommand(context, flags)));
};
