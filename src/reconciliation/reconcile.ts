import { CodedError, describeError } from '../errors.ts';
import { withoutQueryText } from '../error-redaction.ts';
import { drizzleExecutor } from '../db/client.ts';
import { AccountDeauthorizedError } from '../refetch/errors.ts';
import { getWaitingOutRateLimits } from '../refetch/patient-get.ts';
import { checkExpectedCredits } from './expected-credit.ts';
import { type Finding, findingKinds } from './finding.ts';
import { type PayoutToMatch, matchLedger } from './match.ts';
import { type LedgerReaderDeps, type ReadProgress, countedGatewayReads, readLedgerPages } from './read-ledger.ts';
import { resolveFindingsNotFound, upsertFindings } from './sql/findings.ts';
import { selectEntriesForMatching, selectEntriesOfPayout } from './sql/ledger-entries.ts';
import { selectPaymentsInScope } from './sql/payments-in-scope.ts';
import { markPayoutEntriesRead, selectPayout, upsertPayout } from './sql/payouts.ts';
import { type RunRow, claimPartialRun, finishRun, insertRun, stopRun } from './sql/runs.ts';

export interface ReconcileDeps extends LedgerReaderDeps {
  /** Days after which a paid payment without a credit is a finding (INBOX_CONFIG `reconcile.settlementDays`, else the gateway's default). */
  settlementDays: number;
  /**
   * Whether `account` deauthorized the platform (gateway_account_access): asked before a run of an
   * account starts, so none is recorded and no call is made. Absent: every account may be read.
   */
  isDeauthorized?(provider: string, account: string): Promise<boolean>;
}

export type ReconcileScope = { kind: 'window'; since: Date; until: Date } | { kind: 'payout'; payoutId: string };

/** One run, done: its row (counters, window), and what it found. */
export interface RunResult {
  run: RunRow;
  /** True when this run was a partial one picked up where it stopped. */
  resumed: boolean;
  rateLimitedWaits: number;
  gatewayCalls: number;
  /** Everything this run found (each finding once, new or found before). */
  findings: Finding[];
  /** Findings no earlier run had open. */
  newFindings: number;
  /** Open findings this run found no longer true. */
  resolved: number;
}

/** A run stopped part-way: recorded as partial with its cursor; the runs finished before it are in `done`. */
export class ReconciliationIncompleteError extends CodedError {
  readonly code = 'reconciliation_incomplete';
  readonly done: RunResult[];
  readonly stopped: RunRow;
  constructor(stopped: RunRow, done: RunResult[], cause: unknown) {
    super(
      `The ${stopped.provider} reconciliation stopped part-way (${stopped.pages} page(s) read, ${stopped.entriesRead} entries): ${describeError(withoutQueryText(cause)).replace(/\.$/, '')}. Run ${stopped.id} is kept as partial; the next run of the same scope resumes it where it stopped.`,
      { cause },
    );
    this.done = done;
    this.stopped = stopped;
  }
}

const DAY_MS = 86_400_000;
/**
 * A run still `running` after this long was left by a process that died (a month reads in seconds
 * to minutes; the cron job expires after six hours): the next run resumes it like a partial one.
 */
const ABANDONED_AFTER_MS = 6 * 3_600_000;

async function readPayout(deps: ReconcileDeps, payoutId: string, progress: ReadProgress): Promise<void> {
  const payouts = deps.ledger.payouts!;
  const patient = countedGatewayReads(deps, progress);
  const payout = payouts.readPayout(await getWaitingOutRateLimits(patient, payouts.payoutPath(payoutId), progress));
  await upsertPayout(drizzleExecutor(deps.db), deps.provider, payout);
}

/** The payout of a payout run, with its entries, once all of them have been read. */
async function payoutsToMatch(deps: ReconcileDeps, run: RunRow): Promise<PayoutToMatch[]> {
  if (run.scope !== 'payout') return [];
  const executor = drizzleExecutor(deps.db);
  const payout = await selectPayout(executor, deps.provider, run.payoutId!);
  if (!payout) return [];
  return [
    {
      payoutId: payout.payoutId,
      amount: payout.amount,
      currency: payout.currency,
      balanceEntryId: payout.balanceEntryId,
      entries: await selectEntriesOfPayout(executor, deps.provider, payout.payoutId),
    },
  ];
}

/** Matches what the run read against the payments, records what it found and resolves what no longer holds. */
async function matchRun(deps: ReconcileDeps, run: RunRow, progress: ReadProgress): Promise<{ findings: Finding[]; newFindings: number; resolved: number }> {
  const executor = drizzleExecutor(deps.db);
  const payouts = await payoutsToMatch(deps, run);
  // A payout run looks at its entries only; a window run at the window's entries and payments.
  const window = run.scope === 'payout' ? undefined : { since: run.since, until: run.until };
  // Each run its account's: the window's entries its ledger listed, and the payments with its account
  // (a platform run: those with none), so one account's payments are never another's missing credits.
  const listed = window === undefined ? (payouts[0]?.entries ?? []) : await selectEntriesForMatching(executor, deps.provider, window, [], deps.account);
  const namedKeys = [...new Set(listed.flatMap((e) => [e.paymentKey, e.chargeId].filter((k): k is string => k !== null)))];
  const payments = await selectPaymentsInScope(executor, deps.provider, window, namedKeys, deps.account);
  const entries = [
    ...listed,
    ...(await selectEntriesForMatching(
      executor,
      deps.provider,
      window,
      payments.map((p) => p.key),
      deps.account,
    )),
  ];
  const now = deps.clock();
  const matched = matchLedger({ provider: deps.provider, payments, entries, payouts, now, settlementDays: deps.settlementDays });
  const findings = await checkExpectedCredits(deps, matched.findings, now, progress);
  const { evaluated } = matched;
  return deps.db.transaction(async (tx) => {
    const inTx = drizzleExecutor(tx);
    const newFindings = await upsertFindings(inTx, deps.provider, run.id, findings, now, deps.account);
    const resolved = await resolveFindingsNotFound(inTx, deps.provider, findingKinds, [...evaluated], [...findings, ...progress.unreadable], now);
    return { findings: [...progress.unreadable, ...findings], newFindings: newFindings + progress.unreadable.length, resolved };
  });
}

async function completeRun(deps: ReconcileDeps, run: RunRow, resumed: boolean, done: RunResult[]): Promise<RunResult> {
  const progress: ReadProgress = { rateLimitedWaits: 0, gatewayCalls: 0, unreadable: [] };
  try {
    if (run.scope === 'payout' && run.pages === 0) await readPayout(deps, run.payoutId!, progress);
    await readLedgerPages(deps, run, progress);
    if (run.scope === 'payout') await markPayoutEntriesRead(drizzleExecutor(deps.db), deps.provider, run.payoutId!, deps.clock());
    const matched = await matchRun(deps, run, progress);
    const finished = await finishRun(drizzleExecutor(deps.db), run.id, matched.findings.length, deps.clock());
    return { run: finished, resumed, rateLimitedWaits: progress.rateLimitedWaits, gatewayCalls: progress.gatewayCalls, ...matched };
  } catch (error) {
    const stopped = await stopRun(drizzleExecutor(deps.db), run.id, describeError(withoutQueryText(error)), deps.clock()).catch(() => ({
      ...run,
      status: 'partial' as const,
    }));
    throw new ReconciliationIncompleteError(stopped, done, error);
  }
}

/** Whether the run resumed already covers what was asked: the same payout, or a window around the one asked for. */
function covers(run: RunRow, scope: ReconcileScope): boolean {
  if (scope.kind === 'payout') return run.payoutId === scope.payoutId;
  return run.since <= scope.since && run.until >= scope.until;
}

/**
 * Reconciles one provider: first the run of the same scope that stopped part-way, if any, from
 * where it stopped; then the scope asked for, unless that run covered it. Reads the gateway's
 * ledger into ledger_entries, matches it against the payments, and records what it found.
 * Writes the ledger, the runs and the findings only: never a payment. A run of an account that
 * deauthorized the platform throws AccountDeauthorizedError before any run or call.
 */
export async function reconcile(deps: ReconcileDeps, scope: ReconcileScope): Promise<RunResult[]> {
  if (deps.account !== null && (await deps.isDeauthorized?.(deps.provider, deps.account))) throw new AccountDeauthorizedError(deps.provider, deps.account);
  const now = deps.clock();
  const payoutId = scope.kind === 'payout' ? scope.payoutId : null;
  if (scope.kind === 'payout' && !deps.ledger.payouts) throw new Error(`the ${deps.ledger.gateway} ledger has no payouts that list their entries`);
  const done: RunResult[] = [];
  const partial = await claimPartialRun(
    drizzleExecutor(deps.db),
    { provider: deps.provider, scope: scope.kind, payoutId, account: deps.account },
    now,
    new Date(now.getTime() - ABANDONED_AFTER_MS),
  );
  if (partial) {
    done.push(await completeRun(deps, partial, true, done));
    if (covers(partial, scope)) return done;
  }
  // A payout run's window is only its date of reading: the payout lists its own entries.
  const window = scope.kind === 'window' ? { since: scope.since, until: scope.until } : { since: new Date(now.getTime() - DAY_MS), until: now };
  const run = await insertRun(drizzleExecutor(deps.db), { provider: deps.provider, scope: scope.kind, payoutId, account: deps.account, ...window }, now);
  done.push(await completeRun(deps, run, false, done));
  return done;
}
