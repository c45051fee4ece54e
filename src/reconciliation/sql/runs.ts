import type { SqlExecutor } from '../../db/client.ts';
import type { RunStatus } from '../finding.ts';

export interface RunScope {
  provider: string;
  scope: 'window' | 'payout';
  payoutId: string | null;
  /** The account read on its behalf; null: the provider's own ledger (a platform run). */
  account: string | null;
  since: Date;
  until: Date;
}

export interface RunRow extends RunScope {
  id: number;
  status: RunStatus;
  cursor: string | null;
  pages: number;
  entriesRead: number;
  entriesNew: number;
  unreadable: number;
  findings: number;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  resumedRunId: number | null;
}

const COLUMNS = `id::float8 as id, provider, scope, payout_id, account, extract(epoch from since) * 1000 as since_ms, extract(epoch from until) * 1000 as until_ms, status, cursor,
  pages, entries_read, entries_new, unreadable, findings, error, extract(epoch from started_at) * 1000 as started_ms, extract(epoch from finished_at) * 1000 as finished_ms, resumed_run_id::float8 as resumed_run_id`;

function toRun(row: Record<string, unknown>): RunRow {
  const time = (value: unknown) => (value === null ? null : new Date(Number(value)));
  return {
    id: Number(row.id),
    provider: row.provider as string,
    scope: row.scope as RunRow['scope'],
    payoutId: row.payout_id as string | null,
    account: row.account as string | null,
    since: time(row.since_ms)!,
    until: time(row.until_ms)!,
    status: row.status as RunStatus,
    cursor: row.cursor as string | null,
    pages: Number(row.pages),
    entriesRead: Number(row.entries_read),
    entriesNew: Number(row.entries_new),
    unreadable: Number(row.unreadable),
    findings: Number(row.findings),
    error: row.error as string | null,
    startedAt: time(row.started_ms)!,
    finishedAt: time(row.finished_ms),
    resumedRunId: row.resumed_run_id === null ? null : Number(row.resumed_run_id),
  };
}

export async function insertRun(db: SqlExecutor, scope: RunScope, startedAt: Date): Promise<RunRow> {
  const { rows } = await db.executeSql(
    `insert into reconciliation_runs (provider, scope, payout_id, account, since, until, status, started_at) values ($1, $2, $3, $4, $5, $6, 'running', $7) returning ${COLUMNS}`,
    [scope.provider, scope.scope, scope.payoutId, scope.account, scope.since.toISOString(), scope.until.toISOString(), startedAt.toISOString()],
  );
  return toRun(rows[0]!);
}

/**
 * The latest run of this provider, account and scope (and payout) that stopped part-way — or that was
 * left `running` since before `abandonedBefore` (its process killed) — marked running again by
 * this one, its start moved to `now`: `for update skip locked` and the status change keep two
 * runs from resuming it at once.
 */
export async function claimPartialRun(
  db: SqlExecutor,
  scope: { provider: string; scope: 'window' | 'payout'; payoutId: string | null; account: string | null },
  now: Date,
  abandonedBefore: Date,
): Promise<RunRow | undefined> {
  const { rows } = await db.executeSql(
    `update reconciliation_runs set status = 'running', error = null, finished_at = null, started_at = $4
      where id = (select id from reconciliation_runs where provider = $1 and scope = $2 and payout_id is not distinct from $3
                     and account is not distinct from $6
                     and (status = 'partial' or (status = 'running' and started_at < $5))
                   order by id desc limit 1 for update skip locked)
      returning ${COLUMNS}`,
    [scope.provider, scope.scope, scope.payoutId, now.toISOString(), abandonedBefore.toISOString(), scope.account],
  );
  return rows[0] ? toRun(rows[0]) : undefined;
}

/** One page read and stored: where the next one starts, and what it added. */
export async function recordPage(
  db: SqlExecutor,
  runId: number,
  page: { nextCursor: string | null; read: number; inserted: number; unreadable: number },
): Promise<void> {
  await db.executeSql(
    'update reconciliation_runs set cursor = $2, pages = pages + 1, entries_read = entries_read + $3, entries_new = entries_new + $4, unreadable = unreadable + $5 where id = $1',
    [runId, page.nextCursor, page.read, page.inserted, page.unreadable],
  );
}

export async function finishRun(db: SqlExecutor, runId: number, findings: number, finishedAt: Date): Promise<RunRow> {
  const { rows } = await db.executeSql(
    `update reconciliation_runs set status = 'complete', cursor = null, findings = $2, finished_at = $3 where id = $1 returning ${COLUMNS}`,
    [runId, findings, finishedAt.toISOString()],
  );
  return toRun(rows[0]!);
}

/** Stopped part-way: kept with its cursor, and why, so the next run of its scope resumes it. */
export async function stopRun(db: SqlExecutor, runId: number, error: string, finishedAt: Date): Promise<RunRow> {
  const { rows } = await db.executeSql(`update reconciliation_runs set status = 'partial', error = $2, finished_at = $3 where id = $1 returning ${COLUMNS}`, [
    runId,
    error,
    finishedAt.toISOString(),
  ]);
  return toRun(rows[0]!);
}

/**
 * When each provider's last complete platform run finished: the staleness gauge. The platform's
 * alone: runs on a connected account's behalf completing must not hide a platform whose runs stop
 * part-way (those accounts are counted by selectAccountsIncomplete).
 */
export async function selectLastCompleteRuns(db: SqlExecutor): Promise<Array<{ provider: string; finishedAt: Date }>> {
  const { rows } = await db.executeSql<{ provider: string; finished_ms: number }>(
    "select provider, extract(epoch from max(finished_at)) * 1000 as finished_ms from reconciliation_runs where status = 'complete' and account is null group by provider",
  );
  return rows.map((row) => ({ provider: row.provider, finishedAt: new Date(Number(row.finished_ms)) }));
}

/**
 * Per provider, the accounts whose latest finished run stopped part-way: a count, not the accounts
 * (a platform may reconcile thousands; `inboxctl reconcile --provider P --account A` and the
 * dashboard's runs name them). A run still going is not finished.
 */
export async function selectAccountsIncomplete(db: SqlExecutor): Promise<Array<{ provider: string; accounts: number }>> {
  const { rows } = await db.executeSql<{ provider: string; accounts: number }>(
    `select provider, count(*)::float8 as accounts
     from (select distinct on (provider, account) provider, status from reconciliation_runs
           where account is not null and status <> 'running'
           order by provider, account, id desc) latest
     where status = 'partial' group by provider`,
  );
  return rows.map((row) => ({ provider: row.provider, accounts: Number(row.accounts) }));
}

/** The latest runs, newest first: the dashboard's findings page. */
export async function selectLatestRuns(db: SqlExecutor, limit: number): Promise<RunRow[]> {
  const { rows } = await db.executeSql(`select ${COLUMNS} from reconciliation_runs order by id desc limit $1`, [limit]);
  return rows.map(toRun);
}
