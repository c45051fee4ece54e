import { type Database, drizzleExecutor } from '../db/client.ts';
import { type ConflictCount, countConflictsByProvider } from '../inbox/sql/conflicts.ts';
import { type ProviderStatusCount, type StatusCounts, countByProviderAndStatus, oldestPendingByProvider, zeroCounts } from '../inbox/sql/counts.ts';
import { type DecisionCount, countDecisionsByProvider } from '../inbox/sql/decision-counts.ts';
import { type ErrorShapeCount, countFailedByErrorShape } from '../inbox/sql/failed-events.ts';
import { findLastWebhookRequests } from '../inbox/sql/last-webhook-request.ts';
import { sampleSettledLag } from '../inbox/sql/lag.ts';
import { type DeauthorizedAccount, selectDeauthorizedAccounts } from '../refetch/account-access-sql.ts';

export interface StatsFilter {
  provider?: string;
  /** Only the events of this gateway account (webhook_inbox.account): counts, pending, failures, decisions, lag. */
  account?: string;
  /** Counts, ratios and lag cover rows received since then; undefined = all time. */
  since?: Date;
  /** How many of the most recent settled (processed or ignored) events the lag percentiles are computed over. Default 10,000. */
  lagSampleSize?: number;
  /** How many error shapes to list. Default 5. */
  topErrors?: number;
  /** Providers whose last webhook request is reported even without rows in the window (the configured ones: a silent one is the point). */
  configuredProviders?: readonly string[];
}

export interface ProviderStats {
  provider: string;
  /** In the window. */
  counts: StatusCounts;
  total: number;
  /** ignored / total in the window; null when the window is empty. */
  ignoredRatio: number | null;
  /**
   * The same ratio over the window of the same length just before (only with `since`): a jump
   * between the two means the gateway started sending something the handlers do not know.
   */
  ignoredRatioBefore: number | null;
  /** All time, whatever the window: a pending or failed row is owed attention until it is dealt with. */
  oldestPendingAt: Date | null;
  failedAllTime: number;
  /** Duplicates received in the window that said something else than their stored event. */
  conflictingDuplicates: number;
}

export interface LagPercentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface InboxStats {
  generatedAt: Date;
  since: Date | null;
  providers: ProviderStats[];
  /** Window counts summed over providers. */
  totals: StatusCounts;
  /** All time. */
  oldestPendingAt: Date | null;
  oldestPendingAgeSeconds: number | null;
  /** All time. */
  failed: number;
  /** The most common error shapes (see error-shape.ts), each with its newest failed event. */
  topErrors: TopError[];
  /** In the window, per provider, most first: duplicates that contradicted their stored event. */
  conflictingDuplicates: ConflictCount[];
  /** In the window, per provider and decision (why events were processed or ignored), most first. */
  decisions: DecisionCount[];
  /** Seconds; over the most recent settled events in the window (inbox/sql/lag.ts), null when there are none. */
  lag: { sampleSize: number; ingest: LagPercentiles | null; processing: LagPercentiles | null };
  /**
   * Per provider (configured, or with rows in the window), when its newest webhook request was
   * received, all time; null: never. Backfilled rows do not count: a gateway that stopped
   * sending (a disabled endpoint) shows here however much was backfilled since. Named as
   * `inboxctl stats --json` prints it, which scripts read: the old word is kept there.
   */
  lastDeliveries: Array<{ provider: string; receivedAt: Date | null }>;
  /**
   * The accounts that deauthorized the platform (Stripe Connect `account.application.deauthorized`):
   * no gateway read is made on their behalf; their webhooks are still stored and folded.
   */
  deauthorizedAccounts: DeauthorizedAccount[];
}

export interface TopError {
  provider: string;
  /** The error with ids, numbers, times and quoted values replaced (`<id>`, `<n>`, `<time>`, `"…"`). */
  error: string;
  count: number;
  example: { id: number; eventId: string; error: string | null };
}

function percentiles(values: number[] | null, max: number | null): LagPercentiles | null {
  if (!values || max === null) return null;
  // Milliseconds are the resolution that matters (and what keeps 2.6 from printing as 2.5999…).
  const ms = (seconds: unknown) => Math.round(Number(seconds) * 1000) / 1000;
  const [p50, p95, p99] = values.map(ms) as [number, number, number];
  return { p50, p95, p99, max: ms(max) };
}

type CountRow = ProviderStatusCount;

/** ignored ÷ total per provider, for providers with any row. */
function ignoredRatios(rows: CountRow[]): Map<string, number> {
  const sums = new Map<string, { total: number; ignored: number }>();
  for (const { provider, status, n } of rows) {
    const sum = sums.get(provider) ?? { total: 0, ignored: 0 };
    sum.total += n;
    if (status === 'ignored') sum.ignored += n;
    sums.set(provider, sum);
  }
  return new Map([...sums].filter(([, sum]) => sum.total > 0).map(([provider, sum]) => [provider, sum.ignored / sum.total]));
}

function providerStats(
  counts: CountRow[],
  previous: CountRow[],
  pending: Awaited<ReturnType<typeof oldestPendingByProvider>>,
  failed: ErrorShapeCount[],
  conflicts: ConflictCount[],
): ProviderStats[] {
  const byProvider = new Map<string, ProviderStats>();
  const entry = (provider: string) => {
    const stats = byProvider.get(provider) ?? {
      provider,
      counts: zeroCounts(),
      total: 0,
      ignoredRatio: null,
      ignoredRatioBefore: null,
      oldestPendingAt: null,
      failedAllTime: 0,
      conflictingDuplicates: 0,
    };
    byProvider.set(provider, stats);
    return stats;
  };
  for (const { provider, status, n } of counts) {
    entry(provider).counts[status] += n;
    entry(provider).total += n;
  }
  for (const { provider, oldest } of pending) entry(provider).oldestPendingAt = oldest;
  for (const { provider, n } of failed) entry(provider).failedAllTime += n;
  for (const { provider, count } of conflicts) entry(provider).conflictingDuplicates = count;
  const now = ignoredRatios(counts);
  const before = ignoredRatios(previous);
  for (const stats of byProvider.values()) {
    stats.ignoredRatio = now.get(stats.provider) ?? null;
    stats.ignoredRatioBefore = before.get(stats.provider) ?? null;
  }
  return [...byProvider.values()].sort((a, b) => a.provider.localeCompare(b.provider));
}

/** 0001-01-01T00:00:00Z: PostgreSQL refuses the ISO text of an earlier instant ("-000026-…"). */
const FIRST_INSTANT_MS = Date.parse('0001-01-01T00:00:00Z');

/**
 * The window of the same length just before [since, now), for the ignored ratio's trend. Clamped
 * so its start stays in year 1 or later (`--since 1000-01-01` would reach back to year −26) and
 * never after `since` (a `since` in the future would put it past year 9999): a clamped window is
 * shorter or empty, and an empty one gives no ratio — nothing was received then anyway.
 */
function windowBefore(since: Date, now: Date): { since: Date; until: Date } {
  const start = Math.min(since.getTime(), Math.max(FIRST_INSTANT_MS, 2 * since.getTime() - now.getTime()));
  return { since: new Date(start), until: since };
}

export async function collectInboxStats(database: Database, filter: StatsFilter, now: Date): Promise<InboxStats> {
  const db = drizzleExecutor(database);
  const before = filter.since ? { provider: filter.provider, ...windowBefore(filter.since, now) } : undefined;
  const [counts, previous, pending, failed, lag, conflicts, decisions, deauthorized] = await Promise.all([
    countByProviderAndStatus(db, filter),
    before ? countByProviderAndStatus(db, { ...before, account: filter.account }) : Promise.resolve([]),
    oldestPendingByProvider(db, filter),
    countFailedByErrorShape(db, filter),
    sampleSettledLag(db, filter, filter.lagSampleSize ?? 10_000),
    countConflictsByProvider(db, filter),
    countDecisionsByProvider(db, filter),
    selectDeauthorizedAccounts(database),
  ]);
  const providers = providerStats(counts, previous, pending, failed, conflicts);
  const reported =
    filter.provider !== undefined ? [filter.provider] : [...new Set([...(filter.configuredProviders ?? []), ...providers.map((p) => p.provider)])].sort();
  const lastReceived = new Map((await findLastWebhookRequests(db, reported, { lookFirstSince: filter.since })).map((d) => [d.provider, d.receivedAt]));
  const totals = zeroCounts();
  for (const { status, n } of counts) totals[status] += n;
  const oldestPendingAt = providers.reduce<Date | null>((o, p) => (p.oldestPendingAt && (!o || p.oldestPendingAt < o) ? p.oldestPendingAt : o), null);
  return {
    generatedAt: now,
    since: filter.since ?? null,
    providers,
    totals,
    oldestPendingAt,
    oldestPendingAgeSeconds: oldestPendingAt ? Math.max(0, (now.getTime() - oldestPendingAt.getTime()) / 1000) : null,
    failed: failed.reduce((sum, f) => sum + f.n, 0),
    topErrors: failed.slice(0, filter.topErrors ?? 5).map(({ provider, shape, n, example }) => ({ provider, error: shape, count: n, example })),
    conflictingDuplicates: conflicts,
    decisions,
    lag: { sampleSize: lag.n, ingest: percentiles(lag.ingest, lag.ingestMax), processing: percentiles(lag.processing, lag.processingMax) },
    lastDeliveries: reported.map((provider) => ({ provider, receivedAt: lastReceived.get(provider) ?? null })),
    deauthorizedAccounts: deauthorized.filter(
      (d) => (filter.provider === undefined || d.provider === filter.provider) && (filter.account === undefined || d.account === filter.account),
    ),
  };
}

export interface AlertThresholds {
  /** Pending rows older than this raise an alert. */
  maxPendingAgeSeconds: number;
}

/** What an alert should fire on: failed events (any), and pending events older than the threshold. */
export function alertsFor(stats: InboxStats, thresholds: AlertThresholds): string[] {
  const alerts: string[] = [];
  if (stats.failed > 0) alerts.push(`${stats.failed} failed event(s): fix the cause, then \`inboxctl replay <provider> --status failed\``);
  if (stats.oldestPendingAgeSeconds !== null && stats.oldestPendingAgeSeconds > thresholds.maxPendingAgeSeconds) {
    alerts.push(
      `the oldest pending event is ${Math.round(stats.oldestPendingAgeSeconds)} s old (threshold ${thresholds.maxPendingAgeSeconds} s): workers down, stuck or far behind`,
    );
  }
  return alerts;
}
