import type postgres from 'postgres';
import { type CpuSplit, measureCpu } from './cpu.ts';
import { type IngestLevel, loadAtLevel } from './levels.ts';
import type { LoadResult } from './load.ts';
import type { SignedRequest } from './signed-events.ts';
import { type StatementProfile, readStatements, resetStatements } from './statements.ts';

export interface CommitCheck {
  rows: number;
  jobs: number;
  /** rows === jobs === the number of 200s. */
  matches: boolean;
}

export interface DatabaseWork {
  /** Committed transactions in the database during the run (all sessions). */
  commits: number;
  /** WAL flushes to disk (pg_stat_wal.wal_sync) during the run; cluster-wide. */
  walSyncs: number;
}

export interface DurableRun extends LoadResult {
  committed: CommitCheck;
  database: DatabaseWork;
  statements?: StatementProfile;
  cpu: CpuSplit;
}

/** Rows and pg-boss jobs stored for one run's event ids (the inbox and the peer share table and queue names). */
async function committedFor(sql: postgres.Sql, prefix: string): Promise<{ rows: number; jobs: number }> {
  const [row] = await sql<{ rows: number; jobs: number }[]>`
    with inbox as (select id from webhook_inbox where event_id like ${`${prefix}%`})
    select (select count(*)::int from inbox) as rows,
           (select count(*)::int from pgboss.job j where j.name = 'webhooks' and (j.data->>'inboxId')::bigint in (select id from inbox)) as jobs`;
  return row!;
}

async function databaseCounters(sql: postgres.Sql): Promise<DatabaseWork> {
  const [row] = await sql<{ commits: string; syncs: string }[]>`
    select (select xact_commit from pg_stat_database where datname = current_database()) as commits,
           (select wal_sync from pg_stat_wal) as syncs`;
  return { commits: Number(row!.commits), walSyncs: Number(row!.syncs) };
}

// Cumulative statistics reach the shared counters up to a second after a transaction ends.
const settleStats = () => new Promise((resolve) => setTimeout(resolve, 1_100));

/**
 * One load on a server that stores what it acknowledges (the inbox or the peer), with what the
 * database did meanwhile and the check that every 200 left a row and a job. `probe`, when given,
 * is read right before and right after the load (the single-container row counts its backlog).
 */
export async function measureDurableRun(options: {
  target: { baseUrl: string; pid: number; sql: postgres.Sql };
  level: IngestLevel;
  amount: number;
  deliveries: { prefix: string; requests: SignedRequest[] };
  postmasterPid?: number;
  probe?: () => Promise<number>;
  /**
   * False: start the load at once (a backlog drains meanwhile and every second of waiting shrinks
   * it); the database counters may then include the tail of the warm-up before.
   */
  settleFirst?: boolean;
}): Promise<DurableRun & { probe?: { before: number; after: number } }> {
  const { sql } = options.target;
  if (options.settleFirst !== false) await settleStats();
  await resetStatements(sql);
  const before = await databaseCounters(sql);
  const probeBefore = await options.probe?.();
  const cpuOf = measureCpu(options.target.pid, options.postmasterPid);
  const result = await loadAtLevel(options.target.baseUrl, options.level, options.amount, options.deliveries.requests);
  const cpu = cpuOf(result.ok);
  const probeAfter = await options.probe?.();
  await settleStats();
  const after = await databaseCounters(sql);
  const statements = await readStatements(sql, 5);
  const stored = await committedFor(sql, options.deliveries.prefix);
  return {
    ...result,
    committed: { ...stored, matches: stored.rows === result.ok && stored.jobs === result.ok },
    database: { commits: after.commits - before.commits, walSyncs: after.walSyncs - before.walSyncs },
    statements,
    cpu,
    ...(probeBefore !== undefined && probeAfter !== undefined ? { probe: { before: probeBefore, after: probeAfter } } : {}),
  };
}

/** "… req/s p50 … p99 … ms, 200s …, rows …, jobs …" for a run's log line. */
export function describeDurableRun(run: DurableRun): string {
  return (
    `${run.requestsPerSecond.toFixed(0).padStart(6)} req/s p50 ${run.latencyMs.p50} p99 ${run.latencyMs.p99} ms, ` +
    `200s ${run.ok}, rows ${run.committed.rows}, jobs ${run.committed.jobs}${run.committed.matches ? '' : '  ← MISMATCH'}`
  );
}
