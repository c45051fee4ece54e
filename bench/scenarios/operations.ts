import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { loadConfig } from '../../src/config/load-config.ts';
import type { Database } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import * as schema from '../../src/db/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { collectInboxStats } from '../../src/operations/inbox-stats.ts';
import { sweepPendingEvents } from '../../src/operations/sweep-pending-events.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { type IngestAtSize, type MonthRetention, ingestAtSize, retainOneMonth } from './operations-at-size.ts';
import { addRows, createHistoryPartitions } from './operations-data.ts';
import { median } from '../support/median.ts';
import { clusterCpuMs } from '../support/cpu.ts';

export interface QueryPlan {
  sql: string;
  /** Every plan node that reads a relation: "Index Only Scan using webhook_inbox_status_received_at_idx on webhook_inbox", … */
  scans: string[];
  /** A sequential scan of webhook_inbox or pgboss.job: what these operations must never do. */
  seqScanOfBigTable: boolean;
  executionMs: number | null;
  /**
   * Shared buffers the statement touched (hit + read, EXPLAIN ANALYZE; null for a write, which is
   * not executed): unlike its milliseconds, the same on a busy machine as on a quiet one, so what
   * shows whether a statement's cost follows the window or the table.
   */
  sharedBuffers: number | null;
}

export interface OperationTiming {
  operation: string;
  runs: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** What the first run did, and what the last one did (a first sweep re-queues, later ones find live jobs). */
  detail: string;
  plans: QueryPlan[];
  /**
   * CPU the PostgreSQL cluster spent per call, over the RUNS calls (10 ms ticks, so ±10/RUNS ms;
   * cluster-wide: an autovacuum in those seconds counts too). null without the bench's own cluster.
   */
  postgresCpuMsPerRun: number | null;
}

export interface OperationsRun {
  rows: number;
  jobs: number;
  /** Seconds to generate the rows added at this size (and their keys), jobs and ANALYZE. */
  buildSeconds: number;
  timings: OperationTiming[];
  /** At sizes from INGEST_FROM_ROWS on: the receiver on this inbox against an empty one. */
  ingest?: IngestAtSize;
  /** At the largest size, last (it drops a month): retention of the oldest month partition. */
  retention?: MonthRetention;
}

/** Ingest is compared from this size on (at 10^5 the difference is nothing to measure). */
const INGEST_FROM_ROWS = 1_000_000;

const RUNS = 7;

async function addJobs(sql: postgres.Sql): Promise<void> {
  await sql`delete from pgboss.job where name = 'webhooks'`;
  await sql`
    insert into pgboss.job (name, data, state, singleton_key, policy, created_on, started_on, completed_on, start_after)
    select 'webhooks', jsonb_build_object('inboxId', id), 'completed', provider || ':' || resource_id, 'singleton', received_at, received_at, processed_at, received_at
    from webhook_inbox where status in ('processed', 'ignored') and received_at > now() - interval '7 days'`;
  await sql`
    insert into pgboss.job (name, data, state, singleton_key, policy, created_on, start_after)
    select 'webhooks', jsonb_build_object('inboxId', id), 'created', provider || ':' || resource_id, 'singleton', received_at, received_at
    from webhook_inbox where status = 'pending' and id % 2 = 0`;
  await sql`analyze webhook_inbox`;
  await sql`analyze webhook_event_keys`;
  await sql`analyze pgboss.job_common`;
}

/** Runs EXPLAIN (ANALYZE for reads) on every statement an operation sent, with its parameters. */
async function explain(sql: postgres.Sql, statements: Array<{ query: string; parameters: unknown[] }>): Promise<QueryPlan[]> {
  const plans: QueryPlan[] = [];
  for (const { query, parameters } of statements) {
    const read = /^\s*(select|with)\b/i.test(query) && !/\binsert\b|\bupdate\b|\bdelete\b/i.test(query);
    const [row] = await sql.unsafe(`explain (${read ? 'analyze, buffers, ' : ''}format json) ${query}`, parameters as never[]);
    const plan = (row as unknown as { 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time'?: number }> })['QUERY PLAN'][0]!;
    // A node's buffers include its children's: the top node's are the statement's.
    const buffers = plan.Plan['Shared Hit Blocks'] === undefined ? null : plan.Plan['Shared Hit Blocks'] + (plan.Plan['Shared Read Blocks'] ?? 0);
    const scans: string[] = [];
    const walk = (node: PlanNode) => {
      if (node['Relation Name'] || node['Index Name']) {
        scans.push(
          `${node['Node Type']}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}`,
        );
      }
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan.Plan);
    plans.push({
      sql: query.replace(/\s+/g, ' ').slice(0, 400),
      scans,
      seqScanOfBigTable: scans.some((s) => s.startsWith('Seq Scan') && /on (webhook_inbox|job_common|job)$/.test(s)),
      executionMs: plan['Execution Time'] ?? null,
      sharedBuffers: buffers,
    });
  }
  return plans;
}

/** "empty 3,100 / big 3,050 deliveries/s (…), CPU µs …" */
export function describeIngest(ingest: IngestAtSize): string {
  const side = (runs: IngestAtSize['empty']) =>
    `${runs.map((r) => r.requestsPerSecond.toFixed(0)).join(', ')} deliveries/s, CPU µs ${runs.map((r) => `${r.cpu.serverUs} + ${r.cpu.postgresUs ?? '?'}`).join(', ')}`;
  const ratio = median(ingest.big.map((r) => r.requestsPerSecond)) / median(ingest.empty.map((r) => r.requestsPerSecond));
  return `empty inbox ${side(ingest.empty)} | this inbox ${side(ingest.big)} | this ÷ empty ${(ratio * 100).toFixed(0)}%`;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

async function time(
  operation: string,
  run: () => Promise<string>,
  capture: { statements: Array<{ query: string; parameters: unknown[] }> | undefined },
  sql: postgres.Sql,
  postmasterPid: number | undefined,
): Promise<OperationTiming> {
  const durations: number[] = [];
  const cpuBefore = postmasterPid ? clusterCpuMs(postmasterPid) : 0;
  let detail = '';
  let statements: Array<{ query: string; parameters: unknown[] }> = [];
  for (let i = 0; i < RUNS; i += 1) {
    capture.statements = [];
    const started = performance.now();
    const outcome = await run();
    durations.push(performance.now() - started);
    if (i === 0) detail = `first run: ${outcome}`;
    else if (i === RUNS - 1 && outcome !== detail.slice('first run: '.length)) detail += `; last run: ${outcome}`;
    if (i === RUNS - 1) statements = capture.statements;
  }
  capture.statements = undefined;
  const postgresCpuMsPerRun = postmasterPid ? (clusterCpuMs(postmasterPid) - cpuBefore) / RUNS : null;
  const sorted = [...durations].sort((a, b) => a - b);
  return {
    operation,
    runs: RUNS,
    medianMs: sorted[Math.floor(RUNS / 2)]!,
    minMs: sorted[0]!,
    maxMs: sorted[RUNS - 1]!,
    detail,
    plans: await explain(sql, statements),
    postgresCpuMsPerRun,
  };
}

/**
 * The sweeper (sweepPendingEvents: pending rows older than 5 minutes, oldest first, at most 500,
 * the ones without a live job re-queued) and `inboxctl stats` (collectInboxStats: all time, and
 * the last 24 hours), each run RUNS times at each size (10^5 and 10^6 rows by default), through
 * the operations code itself; EXPLAIN shows which index each of their statements uses. The data
 * (operations-data.ts) is a fixed last month and a year of history that grows with the size. From
 * 10^6 rows on, ingest on this inbox against an empty one; at the largest size, retention of the
 * oldest month.
 */
export async function runOperations(options: {
  databaseUrl: string;
  sql: postgres.Sql;
  sizes: number[];
  /** An empty database of the same cluster, for the ingest comparison. */
  emptyDatabase: () => Promise<{ url: string; sql: postgres.Sql }>;
  postmasterPid?: number;
  /** Sweep and stats only: no ingest comparison, no retention (BENCH_OPERATIONS_QUERIES_ONLY=1). */
  queriesOnly?: boolean;
  log: (line: string) => void;
}): Promise<OperationsRun[]> {
  const { sql } = options;
  await applyMigrations(options.databaseUrl);
  const config = loadConfig({}, () => '');
  const boss = await startBoss({
    url: options.databaseUrl,
    role: 'receiver',
    worker: config.worker,
    poolSize: 2,
    connectTimeoutSeconds: 5,
    logger: createLogger('silent'),
  });
  const capture: { statements: Array<{ query: string; parameters: unknown[] }> | undefined } = { statements: undefined };
  const client = postgres(options.databaseUrl, {
    max: 4,
    onnotice: () => {},
    debug: (_connection, query, parameters) => capture.statements?.push({ query, parameters }),
  });
  const db = drizzle(client, { schema }) as unknown as Database;
  const results: OperationsRun[] = [];
  let rows = 0;
  // One instant for the whole history, so the sizes add to the same months.
  const generatedAt = new Date();
  await createHistoryPartitions(sql, generatedAt);
  try {
    for (const size of options.sizes) {
      const started = Date.now();
      await addRows(sql, rows, size, generatedAt);
      rows = size;
      await addJobs(sql);
      const buildSeconds = (Date.now() - started) / 1000;
      const [jobs] = await sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = 'webhooks'`;
      options.log(`  operations: ${rows} inbox rows, ${jobs!.n} jobs (generated in ${buildSeconds.toFixed(1)} s)`);
      const now = () => new Date();
      const timings = [
        await time(
          'sweep',
          async () => {
            const result = await sweepPendingEvents({ db, boss, clock: now }, { olderThanSeconds: 300, limit: 500 });
            return `considered ${result.considered}, re-queued ${result.requeued}`;
          },
          capture,
          sql,
          options.postmasterPid,
        ),
        await time(
          'stats (all time)',
          async () => {
            const stats = await collectInboxStats(db, {}, now());
            return `${stats.providers.length} providers, ${stats.failed} failed, oldest pending ${Math.round(stats.oldestPendingAgeSeconds ?? 0)} s`;
          },
          capture,
          sql,
          options.postmasterPid,
        ),
        await time(
          'stats --since 24h',
          async () => {
            const stats = await collectInboxStats(db, { since: new Date(Date.now() - 86_400_000) }, now());
            return `${Object.values(stats.totals).reduce((a, b) => a + b, 0)} rows in the window`;
          },
          capture,
          sql,
          options.postmasterPid,
        ),
      ];
      for (const t of timings) {
        const cpu = t.postgresCpuMsPerRun !== null ? `, PostgreSQL CPU ${t.postgresCpuMsPerRun.toFixed(1)} ms a call` : '';
        options.log(
          `    ${t.operation.padEnd(18)} median ${t.medianMs.toFixed(1)} ms (min ${t.minMs.toFixed(1)}, max ${t.maxMs.toFixed(1)}${cpu}) — ${t.detail}`,
        );
        for (const plan of t.plans) {
          const measured = [
            plan.executionMs !== null ? `${plan.executionMs.toFixed(1)} ms` : undefined,
            plan.sharedBuffers !== null ? `${plan.sharedBuffers} buffers` : undefined,
          ].filter(Boolean);
          options.log(`      ${plan.seqScanOfBigTable ? 'SEQ SCAN ' : ''}${plan.scans.join('; ')}${measured.length > 0 ? ` (${measured.join(', ')})` : ''}`);
        }
      }
      const run: OperationsRun = { rows, jobs: jobs!.n, buildSeconds, timings };
      if (size >= INGEST_FROM_ROWS && !options.queriesOnly) {
        run.ingest = await ingestAtSize({ big: { url: options.databaseUrl, sql }, empty: await options.emptyDatabase(), postmasterPid: options.postmasterPid });
        options.log(`    ingest c64: ${describeIngest(run.ingest)}`);
      }
      if (size === options.sizes[options.sizes.length - 1] && !options.queriesOnly) {
        run.retention = await retainOneMonth(db, sql, generatedAt);
        const r = run.retention;
        options.log(
          `    retention of ${r.partition}: ${r.rows} rows archived (${(r.archiveBytes / 1e6).toFixed(1)} MB gzip) and the partition dropped in ${r.seconds.toFixed(1)} s (${r.archiveWriteSeconds.toFixed(1)} s of it writing the archive); ${r.rowsAfter} rows left`,
        );
      }
      results.push(run);
    }
  } finally {
    await client.end({ timeout: 5 });
    await boss.stop({ graceful: false, close: true });
  }
  return results;
}
