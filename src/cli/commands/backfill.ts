import type { CAC } from 'cac';
import type { PgBoss } from 'pg-boss';
import { apiKeyEnvName } from '../../refetch/config-keys.ts';
import type { BackfillResult } from '../../operations/backfill.ts';
import type { GatewayEventList } from '../../gateways/shared/event-list.ts';
import type { ConfiguredProvider } from '../../config/configured-providers.ts';
import type { GatewayApiTarget } from '../../refetch/settings.ts';
import type { CliConnection } from '../database.ts';
import type { CommandContext } from '../context.ts';
import { providerAccount } from '../account-option.ts';
import { exitCodes, usageError } from '../exit-codes.ts';
import { partialResult } from '../failure.ts';
import { plural, toJson } from '../output.ts';
import { parsePastInstant, requiredText } from '../parse.ts';
import type { Register } from './types.ts';

interface BackfillFlags {
  since?: unknown;
  account?: unknown;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * Each event the inbox refused, and what to do: no run will store them, so they are named on
 * every run whose window lists them, never dropped from the count in silence.
 */
function describeRefused(result: BackfillResult): string[] {
  const { refused } = result;
  if (refused.length === 0) return [];
  const named = refused.map((r) => ({ ...r, eventId: r.eventId ?? '(no id)' }));
  const width = Math.max(...named.map((r) => r.eventId.length));
  const them = refused.length === 1 ? 'it' : 'them';
  return [
    '  refused (the inbox cannot store them as listed; a run again refuses them again):',
    ...named.map((r) => `    ${r.eventId.padEnd(width)}  ${r.eventType ?? '(no type)'}: ${r.code}: ${r.reason}`),
    `${plural(refused.length, 'listed event')} ${refused.length === 1 ? 'is' : 'are'} not in the inbox, and no backfill will store ${them}: look ${them} up at the gateway and act on ${them} by hand (the workers never see ${them}); if many share one reason, the ${result.provider} driver may need a change.`,
  ];
}

function describe(result: BackfillResult, cutTo: Date | undefined): string[] {
  const lines = [
    `${result.provider}: listed since ${result.since.toISOString()}${cutTo ? ' (cut to what the API keeps)' : ''}, ${plural(result.pages, 'page')} read.`,
    `  listed ${result.listed}, already present ${result.alreadyPresent}, ${result.dryRun ? 'missing (would be stored)' : 'stored'} ${result.stored}${result.refused.length > 0 ? `, refused ${result.refused.length}` : ''}`,
  ];
  if (result.rateLimitedWaits > 0) lines.push(`  rate limited ${plural(result.rateLimitedWaits, 'time')}: waited out Retry-After each time`);
  if (result.stored === 0) return [...lines, ...describeRefused(result)];
  const shown = result.storedEventIds.slice(0, 10).join(', ') + (result.stored > 10 ? ', …' : '');
  lines.push(`  ${result.dryRun ? 'missing' : 'stored'}, oldest first: ${shown}`);
  lines.push(
    result.dryRun
      ? 'Dry run: nothing changed. Without --dry-run these are stored (source backfill) and processed like deliveries.'
      : `The inbox had missed ${plural(result.stored, 'event')}: stored with source backfill and queued. Is the gateway's webhook endpoint still enabled?`,
  );
  return [...lines, ...describeRefused(result)];
}

/** The provider's gateway API and its event list, or exit 2 saying what is missing. */
function backfillTarget(config: { providers: ReadonlyMap<string, ConfiguredProvider> }, provider: string, lists: Readonly<Record<string, GatewayEventList>>) {
  const configured = config.providers.get(provider);
  if (!configured) throw usageError(`no provider "${provider}" is configured here (${[...config.providers.keys()].join(', ') || 'none'}).`);
  const api: GatewayApiTarget | undefined = configured.refetch.api;
  if (!api) throw usageError(`provider "${provider}" has no gateway API key: set ${apiKeyEnvName(provider)} (or api.key in INBOX_CONFIG).`);
  const list = lists[api.gateway.name];
  if (!list)
    throw usageError(
      `the ${api.gateway.name} API lists no past events this inbox can store (docs/operations.md, Backfill); only ${Object.keys(lists).join(', ')} can be backfilled.`,
    );
  return { configured, api, list };
}

async function runBackfill(
  context: CommandContext,
  connection: CliConnection,
  target: ReturnType<typeof backfillTarget>,
  options: { since: Date; dryRun: boolean; account: string | undefined },
  commitDeadlineMs: number,
) {
  const [
    { backfillEvents },
    { createRefetcher },
    { createGroupCommitIngestor },
    { webhookJobInsert },
    { createConflictRecorder },
    { findPresentEventIds },
    { drizzleExecutor },
    { isAccountDeauthorized },
  ] = await Promise.all([
    import('../../operations/backfill.ts'),
    import('../../refetch/refetcher.ts'),
    import('../../inbox/group-commit.ts'),
    import('../../queue/embedded-job-insert.ts'),
    import('../../inbox/conflicting-duplicates.ts'),
    import('../../inbox/sql/present-event-ids.ts'),
    import('../../db/client.ts'),
    import('../../refetch/account-access-sql.ts'),
  ]);
  const { configured, api, list } = target;
  // No listing on behalf of an account that deauthorized the platform (gateway_account_access).
  const refetcher = createRefetcher({
    targets: [api],
    clock: context.runtime.now,
    accountAccess: { isDeauthorized: (provider, account) => isAccountDeauthorized(connection.handle.db, provider, account) },
  });
  // Only a real run stores (and has pg-boss started); a dry run never gets here.
  const ingestor = async (boss: PgBoss) =>
    createGroupCommitIngestor({
      sql: connection.handle.sql,
      jobs: await webhookJobInsert(boss),
      conflicts: createConflictRecorder({ driverOf: (name) => (name === configured.name ? configured.driver : undefined) }),
      // The backfill hands over 100 events at a time: one statement each, with their jobs.
      maxBatchSize: 100,
      maxConcurrentBatches: 1,
      commitDeadlineMs,
    });
  let store: ReturnType<typeof ingestor> | undefined;
  return backfillEvents(
    {
      provider: configured.name,
      driver: configured.driver,
      list,
      account: options.account ?? null,
      get: (path) => refetcher.get(configured.name, path, undefined, options.account),
      ingest: (event) => {
        if (!connection.boss) throw new Error('inboxctl backfill: storing needs pg-boss, which a dry run does not start');
        return (store ??= ingestor(connection.boss)).then((stored) => stored.ingest(event));
      },
      findPresent: (ids) => findPresentEventIds(drizzleExecutor(connection.handle.db), configured.name, ids),
      clock: context.runtime.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      notice: context.notice,
    },
    options,
  );
}

async function backfill(context: CommandContext, providerArg: unknown, flags: BackfillFlags): Promise<number> {
  const provider = requiredText(providerArg, 'the provider');
  if (flags.since === undefined) throw usageError('--since is required (a duration ago such as 72h, or an ISO-8601 time).');
  // A future --since lists nothing, and its exit 0 ("nothing was missing") would vouch for a
  // window it never read.
  const requested = parsePastInstant(flags.since, '--since', context.now);
  const config = await context.config();
  const { gatewayEventLists } = await import('../../gateways/registry.ts');
  const target = backfillTarget(config, provider, gatewayEventLists);
  const oldest = new Date(context.now.getTime() - target.list.retentionDays * 86_400_000);
  const cutTo = requested < oldest ? oldest : undefined;
  if (cutTo) context.notice(`the ${target.list.gateway} API lists only the last ${target.list.retentionDays} days: --since is cut to ${cutTo.toISOString()}`);
  const options = { since: cutTo ?? requested, dryRun: flags.dryRun === true, account: providerAccount(target.api, provider, flags.account) };
  const result = await context
    .withDatabase({ boss: !options.dryRun }, (connection, appConfig) =>
      runBackfill(context, connection, target, options, Math.max(appConfig.commitDeadlineMs, 30_000)),
    )
    .catch((error: unknown) => {
      throw partialResult(error, (partial: BackfillResult) => describe(partial, cutTo));
    });
  if (flags.json) context.runtime.stdout.write(toJson(result));
  else for (const line of describe(result, cutTo)) context.print(line);
  // Missing events mean deliveries were lost, and refused ones need a human: worth a look (a
  // cron's `|| alert`). Not exit 4: the run is done, and running it again would not change that.
  return result.stored > 0 || result.refused.length > 0 ? exitCodes.attention : exitCodes.ok;
}

export const registerBackfill: Register = (cli: CAC, run) => {
  cli
    .command('backfill <provider>', "Store the events the gateway's API lists that the inbox never received (source backfill), and process them")
    .option('--since <time>', 'Events created at or after: a duration ago (72h, 3d) or an ISO-8601 time (required)')
    .option(
      '--account <id>',
      "List one account's events: an Asaas subaccount of INBOX_CONFIG accounts (with its own API key), or a Connect account (default: the provider's own)",
    )
    .option('--dry-run', 'Count what is missing; store nothing')
    .option('--json', 'Machine-readable output')
    .example('inboxctl backfill stripe --since 72h --dry-run')
    .action((provider: unknown, flags: BackfillFlags) => run((context) => backfill(context, provider, flags)));
};
