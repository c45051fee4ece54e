import type { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { OperationsConfig } from '../config/config.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import { type Database, drizzleExecutor } from '../db/client.ts';
import type { GatewayLedger } from '../gateways/shared/ledger.ts';
import { ReconciliationIncompleteError, type ReconcileDeps, type RunResult, reconcile } from '../reconciliation/reconcile.ts';
import { selectAnnouncedPayouts } from '../reconciliation/sql/payouts.ts';
import { selectAccountsOfPayments } from '../reconciliation/sql/payments-in-scope.ts';
import { AccountDeauthorizedError } from '../refetch/errors.ts';

export const RECONCILE_QUEUE = 'inbox-reconcile';
export const RECONCILE_PAYOUTS_QUEUE = 'inbox-reconcile-payouts';

/** One provider the cron reconciles: its gateway has a ledger and the provider an API key. */
export interface ReconcileTarget {
  provider: string;
  ledger: GatewayLedger;
  settlementDays: number;
  /**
   * The accounts whose ledgers are read on their behalf after the provider's own: an Asaas
   * provider's configured subaccounts (each with its key), a Connect provider's `knownAccounts`.
   */
  accounts?: readonly string[];
  /** A Connect provider: the accounts its payments name (in the window) are reconciled too. */
  accountsOfPayments?: boolean;
}

/** The configured providers whose gateway has a ledger and whose API key is set, each with its settlement delay and its accounts. */
export function reconcileTargetsOf(providers: Iterable<ConfiguredProvider>, ledgers: Readonly<Record<string, GatewayLedger>>): ReconcileTarget[] {
  return [...providers].flatMap((provider) => {
    const api = provider.refetch.api;
    const ledger = api && ledgers[api.gateway.name];
    if (!api || !ledger) return [];
    // Read on an account's behalf only as the refetcher can: its own key, or a Connect header.
    const connect = api.connect === true && api.gateway.accountHeaders !== undefined;
    const accounts = api.accountKeys ? [...api.accountKeys.keys()] : connect ? [...(provider.accounts.known ?? [])] : [];
    return [
      { provider: provider.name, ledger, settlementDays: provider.settlementDays ?? ledger.defaultSettlementDays, accounts, accountsOfPayments: connect },
    ];
  });
}

export interface ReconcileCronDeps {
  db: Database;
  boss: PgBoss;
  clock: () => Date;
  logger: Logger;
  targets: readonly ReconcileTarget[];
  /** The service's refetcher: the cron shares the refetch's rate limit and breaker per (provider, account). */
  get(provider: string, path: string, account?: string): Promise<unknown>;
  /** gateway_account_access: an account that deauthorized the platform is skipped, never read. */
  isDeauthorized?(provider: string, account: string): Promise<boolean>;
  operations: OperationsConfig;
}

const DAY_MS = 86_400_000;

function logRuns(logger: Logger, results: readonly RunResult[]): void {
  for (const { run, findings, newFindings, resolved, gatewayCalls } of results) {
    const fields = {
      provider: run.provider,
      account: run.account,
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

function runDepsOf(deps: ReconcileCronDeps, target: ReconcileTarget, account: string | null, logger: Logger): ReconcileDeps {
  return {
    db: deps.db,
    provider: target.provider,
    account,
    ledger: target.ledger,
    get: (path) => deps.get(target.provider, path, account ?? undefined),
    clock: deps.clock,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    notice: (text) => logger.info({ provider: target.provider, account }, text),
    settlementDays: target.settlementDays,
    isDeauthorized: deps.isDeauthorized,
  };
}

/**
 * The provider's own ledger (null), then each account's: the configured ones, and for a Connect
 * provider every account its payments of the window name (an account not in knownAccounts still
 * has its money checked).
 */
async function accountsToReconcile(deps: ReconcileCronDeps, target: ReconcileTarget): Promise<Array<string | null>> {
  const accounts = new Set(target.accounts ?? []);
  if (target.accountsOfPayments) {
    const since = new Date(deps.clock().getTime() - deps.operations.reconcileWindowDays * DAY_MS);
    for (const account of await selectAccountsOfPayments(drizzleExecutor(deps.db), target.provider, since)) accounts.add(account);
  }
  return [null, ...[...accounts].sort()];
}

/** Each payout a webhook of this account announced in the window whose entries were not read since: its own run. */
async function reconcileAnnouncedPayoutsOf(deps: ReconcileCronDeps, target: ReconcileTarget, account: string | null, logger: Logger): Promise<void> {
  const payouts = target.ledger.payouts;
  if (!payouts) return;
  const since = new Date(deps.clock().getTime() - deps.operations.reconcileWindowDays * DAY_MS);
  for (const payoutId of await selectAnnouncedPayouts(drizzleExecutor(deps.db), target.provider, payouts.settledEventTypes, since, account)) {
    logRuns(logger, await reconcile(runDepsOf(deps, target, account, logger), { kind: 'payout', payoutId }));
  }
}

/** The window of the last RECONCILE_WINDOW_DAYS, then the payouts announced in it, of one account (null: the provider's own). */
async function reconcileAccount(deps: ReconcileCronDeps, target: ReconcileTarget, account: string | null, logger: Logger): Promise<void> {
  const now = deps.clock();
  const since = new Date(now.getTime() - deps.operations.reconcileWindowDays * DAY_MS);
  logRuns(logger, await reconcile(runDepsOf(deps, target, account, logger), { kind: 'window', since, until: now }));
  await reconcileAnnouncedPayoutsOf(deps, target, account, logger);
}

type AccountWork = (deps: ReconcileCronDeps, target: ReconcileTarget, account: string | null, logger: Logger) => Promise<void>;

/**
 * `queue` as a pg-boss schedule on an exclusive queue (one job at a time database-wide; a tick
 * that finds one running is dropped) whose job does `work` for each provider and each of its
 * accounts. An account whose run stops part-way is logged and left partial (the next tick resumes
 * it); the others still run. A deauthorized account is skipped, and the log says so.
 */
async function scheduleForEachAccount(deps: ReconcileCronDeps, queue: string, cron: string, work: AccountWork, logger: Logger): Promise<void> {
  const { boss } = deps;
  const options = { retryLimit: 0, expireInSeconds: 6 * 3600, deleteAfterSeconds: 30 * 86_400 };
  await boss.createQueue(queue, { policy: 'exclusive', ...options });
  await boss.updateQueue(queue, options);
  await boss.schedule(queue, cron, {}, { tz: 'UTC' });
  await boss.work(queue, async () => {
    const stopped: string[] = [];
    for (const target of deps.targets) {
      for (const account of await accountsToReconcile(deps, target)) {
        try {
          await work(deps, target, account, logger);
        } catch (error) {
          if (error instanceof AccountDeauthorizedError) {
            logger.warn(
              { provider: target.provider, account, queue },
              'reconciliation skipped: the account deauthorized this platform, its ledger is not read',
            );
            continue;
          }
          if (error instanceof ReconciliationIncompleteError) logRuns(logger, error.done);
          logger.error({ err: error, provider: target.provider, account, queue }, 'reconciliation stopped part-way; the next tick resumes it');
          stopped.push(account === null ? target.provider : `${target.provider} (account ${account})`);
        }
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
  await scheduleForEachAccount(deps, RECONCILE_QUEUE, deps.operations.reconcileCron, reconcileAccount, logger);
  await scheduleForEachAccount(deps, RECONCILE_PAYOUTS_QUEUE, deps.operations.reconcilePayoutsCron, reconcileAnnouncedPayoutsOf, logger);
}
