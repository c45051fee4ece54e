import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { OperationsConfig } from '../config/config.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import { type Database, drizzleExecutor } from '../db/client.ts';
import type { GatewayLedger } from '../gateways/shared/ledger.ts';
import { ReconciliationIncompleteError, type ReconcileDeps, type RunResult, reconcile } from '../reconciliation/reconcile.ts';
import { selectAnnouncedPayouts } from '../reconciliation/sql/payouts.ts';

export const RECONCILE_QUEUE = 'inbox-reconcile';
export const RECONCILE_PAYOUTS_QUEUE = 'inbox-reconcile-payouts';

/** One provider the cron reconciles: its gateway has a ledger and the provider an API key. */
export interface ReconcileTarget {
  provider: string;
  ledger: GatewayLedger;
  settlementDays: number;
}

/** The configured providers whose gateway has a ledger and whose API key is set, each with its settlement delay. */
export function reconcileTargetsOf(providers: Iterable<ConfiguredProvider>, ledgers: Readonly<Record<string, GatewayLedger>>): ReconcileTarget[] {
  return [...providers].flatMap((provider) => {
    const ledger = provider.refetch.api && ledgers[provider.refetch.api.gateway.name];
    return ledger ? [{ provider: provider.name, ledger, settlementDays: provider.settlementDays ?? ledger.defaultSettlementDays }] : [];
  });
}

export interface ReconcileCronDeps {
  db: Database;
  boss: PgBoss;
  clock: () => Date;
  logger: Logger;
  targets: readonly ReconcileTarget[];
  /** The service's refetcher: the cron shares the refetch's rate limit and breaker per provider. */
  get(provider: string, path: string): Promise<unknown>;
  operations: OperationsConfig;
}

const DAY_MS = 86_400_000;

function logRuns(logger: Logger, results: readonly RunResult[]): void {
  for (const { run, findings, newFindings, resolved, gatewayCalls } of results) {
    const fields = {
      provider: run.provider,
      run: run.id,
      scope: run.scope,
      payout: run.payoutId,
      pages: run.pages,
      entries: run.entriesRead,
      findings: findings.length,
      newFindings,
      resolved,
      gatewayCalls,
    };
    if (newFindings > 0) logger.warn(fields, 'reconciliation found new discrepancies (inboxctl reconcile, dashboard Findings)');
    else logger.info(fields, 'reconciliation run complete');
  }
}

function runDepsOf(deps: ReconcileCronDeps, target: ReconcileTarget, logger: Logger): ReconcileDeps {
  return {
    db: deps.db,
    provider: target.provider,
    ledger: target.ledger,
    get: (path) => deps.get(target.provider, path),
    clock: deps.clock,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    notice: (text) => logger.info({ provider: target.provider }, text),
    settlementDays: target.settlementDays,
  };
}

/** Each payout a webhook announced in the window whose entries were not read since: its own run. */
async function reconcileAnnouncedPayouts(deps: ReconcileCronDeps, target: ReconcileTarget, logger: Logger): Promise<void> {
  const payouts = target.ledger.payouts;
  if (!payouts) return;
  const since = new Date(deps.clock().getTime() - deps.operations.reconcileWindowDays * DAY_MS);
  for (const payoutId of await selectAnnouncedPayouts(drizzleExecutor(deps.db), target.provider, payouts.settledEventTypes, since)) {
    logRuns(logger, await reconcile(runDepsOf(deps, target, logger), { kind: 'payout', payoutId }));
  }
}

/** The window of the last RECONCILE_WINDOW_DAYS, then the payouts announced in it. */
async function reconcileProvider(deps: ReconcileCronDeps, target: ReconcileTarget, logger: Logger): Promise<void> {
  const now = deps.clock();
  const since = new Date(now.getTime() - deps.operations.reconcileWindowDays * DAY_MS);
  logRuns(logger, await reconcile(runDepsOf(deps, target, logger), { kind: 'window', since, until: now }));
  await reconcileAnnouncedPayouts(deps, target, logger);
}

type ProviderWork = (deps: ReconcileCronDeps, target: ReconcileTarget, logger: Logger) => Promise<void>;

/**
 * `queue` as a pg-boss schedule on an exclusive queue (one job at a time database-wide; a tick
 * that finds one running is dropped) whose job does `work` for each provider. A provider whose run
 * stops part-way is logged and left partial (the next tick resumes it); the others still run.
 */
async function scheduleForEachProvider(deps: ReconcileCronDeps, queue: string, cron: string, work: ProviderWork, logger: Logger): Promise<void> {
  const { boss } = deps;
  const options = { retryLimit: 0, expireInSeconds: 6 * 3600, deleteAfterSeconds: 30 * 86_400 };
  await boss.createQueue(queue, { policy: 'exclusive', ...options });
  await boss.updateQueue(queue, options);
  await boss.schedule(queue, cron, {}, { tz: 'UTC' });
  await boss.work(queue, async () => {
    const stopped: string[] = [];
    for (const target of deps.targets) {
      try {
        await work(deps, target, logger);
      } catch (error) {
        if (error instanceof ReconciliationIncompleteError) logRuns(logger, error.done);
        logger.error({ err: error, provider: target.provider, queue }, 'reconciliation stopped part-way; the next tick resumes it');
        stopped.push(target.provider);
      }
    }
    if (stopped.length > 0) throw new Error(`reconciliation stopped part-way for ${stopped.join(', ')}`);
  });
}

/**
 * The daily reconciliation (RECONCILE_CRON: each provider's window, then the payouts announced in
 * it) and, between two, the payouts a webhook announced since (RECONCILE_PAYOUTS_CRON, every 15
 * minutes: a payout.paid or payout.reconciliation_completed starts its payout's run within that).
 */
export async function startReconcileCron(deps: ReconcileCronDeps): Promise<void> {
  const logger = deps.logger.child({ component: 'reconcile-cron' });
  await scheduleForEachProvider(deps, RECONCILE_QUEUE, deps.operations.reconcileCron, reconcileProvider, logger);
  await scheduleForEachProvider(deps, RECONCILE_PAYOUTS_QUEUE, deps.operations.reconcilePayoutsCron, reconcileAnnouncedPayouts, logger);
}
