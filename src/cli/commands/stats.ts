import type { CAC } from 'cac';
import type { InboxStatus } from '../../db/schema.ts';
import type { InboxStats, LagPercentiles } from '../../operations/inbox-stats.ts';
import type { CommandContext } from '../context.ts';
import { exitCodes } from '../exit-codes.ts';
import { formatDuration } from '../../format/duration.ts';
import { formatPercent, formatSeconds, table, toJson } from '../output.ts';
import { parseDuration, parsePastInstant, requiredText, singleValue } from '../parse.ts';
import type { Register } from './types.ts';

interface StatsFlags {
  provider?: unknown;
  account?: unknown;
  since?: unknown;
  maxPendingAge?: unknown;
  json?: boolean;
}

/** An error's first line, at most 200 characters: one line of the report each. */
function firstLine(text: string): string {
  const line = text.split('\n')[0]!;
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function lagLine(label: string, lag: LagPercentiles | null): string {
  if (!lag) return `  ${label}: no settled events in the window`;
  return `  ${label}: p50 ${formatSeconds(lag.p50)}  p95 ${formatSeconds(lag.p95)}  p99 ${formatSeconds(lag.p99)}  max ${formatSeconds(lag.max)}`;
}

/** Not an alert (exit 0): like the ignored ratio, a conflict needs a look, not a page. */
function conflictLines(stats: InboxStats): string[] {
  const total = stats.conflictingDuplicates.reduce((sum, c) => sum + c.count, 0);
  if (total === 0) return ['Conflicting duplicates in the window: none.'];
  return [
    `Conflicting duplicates in the window: ${total} (same id, something else said; answered 200, not processed).`,
    ...stats.conflictingDuplicates.map(
      (c) => `  ${String(c.count).padStart(6)}× ${c.provider}: latest ${c.latestEventId} (inboxctl show ${c.provider} ${c.latestEventId})`,
    ),
  ];
}

/** Why events ended as they did, per provider; a refused refund, dispute or chargeback names its newest event. */
function decisionLines(stats: InboxStats): string[] {
  if (stats.decisions.length === 0) return ['Decisions in the window: none recorded.'];
  return [
    'Decisions in the window (why each event was processed or ignored):',
    table(
      ['PROVIDER', 'DECISION', 'EVENTS', 'LATEST'],
      stats.decisions.map((d) => [d.provider, d.decision, String(d.count), `inboxctl show ${d.provider} ${d.latestEventId}`]),
    ),
  ];
}

/** A silent gateway (a disabled endpoint) shows as an old last webhook request; backfilled rows never count as one. */
function lastWebhookRequestLines(stats: InboxStats): string[] {
  if (stats.lastDeliveries.length === 0) return [];
  const width = Math.max(...stats.lastDeliveries.map((d) => d.provider.length));
  return [
    'Last delivery (webhook, all time):',
    ...stats.lastDeliveries.map(
      ({ provider, receivedAt }) =>
        `  ${provider.padEnd(width)}  ${receivedAt ? `${formatDuration(Math.max(0, (stats.generatedAt.getTime() - receivedAt.getTime()) / 1000))} ago (${receivedAt.toISOString()})` : 'never'}`,
    ),
  ];
}

function deauthorizedLines(stats: InboxStats): string[] {
  if (stats.deauthorizedAccounts.length === 0) return [];
  return [
    `Deauthorized accounts (no gateway reads on their behalf; their webhooks are still stored and folded): ${stats.deauthorizedAccounts.length}`,
    ...stats.deauthorizedAccounts.map((d) => `  ${d.provider} ${d.account}: since ${d.since.toISOString()} (inboxctl show ${d.provider} ${d.eventId})`),
  ];
}

function render(stats: InboxStats, window: string, alerts: string[]): string[] {
  const lines = [`Inbox, events received ${window} (counts and ratios); failed and pending: all time.`, ''];
  const inboxStatuses = Object.keys(stats.totals) as InboxStatus[];
  if (stats.providers.length === 0) lines.push('No events.');
  else {
    // BEFORE: the ignored ratio over the same length of time just before the window (a jump = the gateway changed something).
    const before = stats.since ? ['BEFORE'] : [];
    const rows = stats.providers.map((p) => [
      p.provider,
      ...inboxStatuses.map((s) => String(p.counts[s])),
      String(p.total),
      formatPercent(p.ignoredRatio),
      ...(stats.since ? [formatPercent(p.ignoredRatioBefore)] : []),
    ]);
    lines.push(table(['PROVIDER', ...inboxStatuses.map((s) => s.toUpperCase()), 'TOTAL', 'IGNORED', ...before], rows));
    if (stats.since) lines.push('(IGNORED: ignored ÷ total in the window; BEFORE: the same ratio over the window just before it.)');
  }
  lines.push('');
  lines.push(
    stats.oldestPendingAt
      ? `Oldest pending: ${formatDuration(stats.oldestPendingAgeSeconds ?? 0)} old (received ${stats.oldestPendingAt.toISOString()}).`
      : 'Oldest pending: none.',
  );
  for (const p of stats.providers.filter((x) => x.oldestPendingAt))
    lines.push(`  ${p.provider}: ${formatDuration((stats.generatedAt.getTime() - p.oldestPendingAt!.getTime()) / 1000)}`);
  lines.push(`Failed: ${stats.failed}.`);
  for (const e of stats.topErrors) {
    lines.push(`  ${String(e.count).padStart(6)}× ${e.provider}: ${firstLine(e.error)}`);
    lines.push(`          e.g. inbox id ${e.example.id} (${e.provider} ${e.example.eventId}): ${firstLine(e.example.error ?? '(no error recorded)')}`);
  }
  lines.push(...conflictLines(stats));
  lines.push(...decisionLines(stats));
  lines.push(...lastWebhookRequestLines(stats));
  lines.push(...deauthorizedLines(stats));
  lines.push(`Lag over the latest ${stats.lag.sampleSize} settled (processed or ignored) events in the window (seconds):`);
  lines.push(lagLine('ingest (received − occurred)', stats.lag.ingest));
  lines.push(lagLine('processing (settled − received)', stats.lag.processing));
  lines.push('');
  lines.push(alerts.length === 0 ? 'OK: nothing failed, nothing pending too long.' : alerts.map((a) => `ALERT: ${a}`).join('\n'));
  return lines;
}

async function stats(context: CommandContext, flags: StatsFlags): Promise<number> {
  const sinceText = flags.since === undefined ? '24h' : singleValue(flags.since, '--since');
  const since = sinceText === 'all' ? undefined : parsePastInstant(sinceText, '--since', context.now);
  const maxPendingAgeSeconds = parseDuration(flags.maxPendingAge ?? '10m', '--max-pending-age') / 1000;
  const provider = flags.provider === undefined ? undefined : requiredText(flags.provider, '--provider');
  const account = flags.account === undefined ? undefined : requiredText(flags.account, '--account');
  const [{ alertsFor, collectInboxStats }, { requireKnownProvider }] = await Promise.all([
    import('../../operations/inbox-stats.ts'),
    import('../known-provider.ts'),
  ]);
  const result = await context.withDatabase({ boss: false }, async ({ handle }, config) => {
    if (provider !== undefined) await requireKnownProvider(handle.db, config, provider, '--provider');
    return collectInboxStats(handle.db, { provider, account, since, configuredProviders: [...config.providers.keys()] }, context.now);
  });
  const alerts = alertsFor(result, { maxPendingAgeSeconds });
  if (flags.json) context.runtime.stdout.write(toJson({ ...result, maxPendingAgeSeconds, alerts }));
  else {
    const window = since ? (/^\d/.test(sinceText) && !sinceText.includes('-') ? `in the last ${sinceText}` : `since ${since.toISOString()}`) : 'at any time';
    for (const line of render(result, window, alerts)) context.print(line);
  }
  return alerts.length > 0 ? exitCodes.attention : exitCodes.ok;
}

export const registerStats: Register = (cli: CAC, run) => {
  cli
    .command('stats', 'Counts per provider and status and per decision, ignored ratio, oldest pending, failures, lag; exit 1 on failed or old pending')
    .option('--provider <name>', 'Only this provider')
    .option('--account <id>', 'Only the events of this gateway account (a Stripe Connect acct_…)')
    .option('--since <time>', 'Window for counts, ratios and lag: ISO-8601 time, a duration ago, or "all" (default 24h)')
    .option('--max-pending-age <duration>', 'Pending older than this is an alert (default 10m: the sweep age plus one sweep)')
    .option('--json', 'Machine-readable output')
    .example('inboxctl stats --since 1h --max-pending-age 15m || page-someone')
    .action((flags: StatsFlags) => run((context) => stats(context, flags)));
};
