import type postgres from 'postgres';
import { type CpuSplit, measureCpu } from '../support/cpu.ts';
import { type LoadResult, runLoad } from '../support/load.ts';
import { runPacedLoad } from '../support/paced-load.ts';
import { BENCH_SECRET, startBaseline, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';
import { type StatementProfile, readStatements, resetStatements } from '../support/statements.ts';

export interface IngestLevel {
  name: string;
  connections: number;
  /** Requests sent to the inbox; the baseline gets more (it answers ~10× faster), so both runs last seconds. */
  amount: number;
  baselineAmount: number;
  rate?: number;
}

/**
 * Concurrency 1, 16, 64 as fast as answers come (autocannon, closed loop), then a fixed 1,000
 * req/s for latency (paced open loop, at most 64 connections: see paced-load.ts for why not
 * autocannon's rate option).
 */
export const INGEST_LEVELS: IngestLevel[] = [
  { name: 'c1', connections: 1, amount: 2_000, baselineAmount: 15_000 },
  { name: 'c16', connections: 16, amount: 10_000, baselineAmount: 60_000 },
  { name: 'c64', connections: 64, amount: 20_000, baselineAmount: 60_000 },
  { name: 'rate1000', connections: 64, amount: 10_000, baselineAmount: 10_000, rate: 1_000 },
];

function load(baseUrl: string, level: IngestLevel, amount: number, requests: ReturnType<typeof signedDeliveries>): Promise<LoadResult> {
  if (level.rate) return runPacedLoad({ baseUrl, requests, rate: level.rate, amount, connections: level.connections });
  return runLoad({ baseUrl, requests, connections: level.connections, amount, maxSeconds: 180 });
}

export interface CommitCheck {
  rows: number;
  jobs: number;
  /** rows === jobs === the number of 200s. */
  matches: boolean;
}

export interface DatabaseWork {
  /** Committed transactions in the database during the run (all sessions). */
  commits: number;
  /** WAL flushes to disk (pg_stat_wal.wal_sync) during the run. */
  walSyncs: number;
}

export interface IngestRun {
  repeat: number;
  level: IngestLevel;
  baseline: LoadResult & { cpu: CpuSplit };
  inbox: LoadResult & { committed: CommitCheck; database: DatabaseWork; statements?: StatementProfile; cpu: CpuSplit };
  /** inbox req/s ÷ baseline req/s, from adjacent runs. */
  ratio: number;
}

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
 * Baseline and inbox run one after the other at each level, so each ratio comes from two
 * adjacent runs on the same (noisy) machine. Both servers stay up for the whole matrix; only one
 * is loaded at a time.
 */
export async function runIngest(options: {
  databaseUrl: string;
  sql: postgres.Sql;
  repeats: number;
  /** Service settings beyond INBOX_ROLE=receiver (tuning runs only). */
  env: Record<string, string>;
  /** Only these levels (by name); all by default. */
  levels?: string[];
  /** When known, PostgreSQL's CPU is counted too. */
  postmasterPid?: number;
  log: (line: string) => void;
}): Promise<IngestRun[]> {
  const baseline = await startBaseline();
  const inbox = await startInbox(options.databaseUrl, { INBOX_ROLE: 'receiver', ...options.env });
  const runs: IngestRun[] = [];
  let batch = 0;
  const deliveriesFor = (amount: number, connections: number, target: string) => {
    batch += 1;
    const prefix = `evt_bench_${target}_${batch}_`;
    return { prefix, requests: signedDeliveries(prefix, amount + 2 * connections, BENCH_SECRET) };
  };
  try {
    // Warm both up (JIT, pools, prepared statements); not reported.
    await runLoad({ baseUrl: baseline.baseUrl, requests: deliveriesFor(10_000, 16, 'baseline').requests, connections: 16, amount: 10_000, maxSeconds: 120 });
    await runLoad({ baseUrl: inbox.baseUrl, requests: deliveriesFor(3_000, 16, 'inbox').requests, connections: 16, amount: 3_000, maxSeconds: 120 });
    for (let repeat = 1; repeat <= options.repeats; repeat += 1) {
      for (const level of INGEST_LEVELS.filter((l) => !options.levels || options.levels.includes(l.name))) {
        const baselineRequests = deliveriesFor(level.baselineAmount, level.connections, 'baseline').requests;
        const baselineCpu = measureCpu(baseline.process.pid, options.postmasterPid);
        const baseLoad = await load(baseline.baseUrl, level, level.baselineAmount, baselineRequests);
        const base = { ...baseLoad, cpu: baselineCpu(baseLoad.ok) };
        const { prefix, requests } = deliveriesFor(level.amount, level.connections, 'inbox');
        await settleStats();
        await resetStatements(options.sql);
        const before = await databaseCounters(options.sql);
        const inboxCpu = measureCpu(inbox.process.pid, options.postmasterPid);
        const result = await load(inbox.baseUrl, level, level.amount, requests);
        const cpu = inboxCpu(result.ok);
        await settleStats();
        const after = await databaseCounters(options.sql);
        const statements = await readStatements(options.sql, 5);
        const stored = await committedFor(options.sql, prefix);
        const committed = { ...stored, matches: stored.rows === result.ok && stored.jobs === result.ok };
        const run: IngestRun = {
          repeat,
          level,
          baseline: base,
          inbox: { ...result, committed, database: { commits: after.commits - before.commits, walSyncs: after.walSyncs - before.walSyncs }, statements, cpu },
          ratio: result.requestsPerSecond / base.requestsPerSecond,
        };
        runs.push(run);
        options.log(
          `  ingest #${repeat} ${level.name.padEnd(8)} baseline ${base.requestsPerSecond.toFixed(0).padStart(6)} req/s p99 ${base.latencyMs.p99} ms | ` +
            `inbox ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s p50 ${result.latencyMs.p50} p99 ${result.latencyMs.p99} ms, ` +
            `200s ${result.ok}, rows ${stored.rows}, jobs ${stored.jobs}${committed.matches ? '' : '  ← MISMATCH'}, ` +
            `${(result.ok / Math.max(1, run.inbox.database.commits)).toFixed(1)} events/commit, ${(result.ok / Math.max(1, run.inbox.database.walSyncs)).toFixed(1)} events/WAL sync | ` +
            `CPU µs/request: inbox ${cpu.serverUs} + PostgreSQL ${cpu.postgresUs ?? '?'} + load ${cpu.loadGeneratorUs} vs baseline ${base.cpu.serverUs} + load ${base.cpu.loadGeneratorUs} | ` +
            `ratio ${(run.ratio * 100).toFixed(0)}%${result.senderLagMsP99 !== undefined ? ` | sender lag p99 ${result.senderLagMsP99} / ${base.senderLagMsP99} ms` : ''}`,
        );
      }
    }
  } finally {
    await baseline.process.stop();
    await inbox.process.stop();
  }
  return runs;
}
