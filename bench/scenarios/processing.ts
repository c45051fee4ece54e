import type postgres from 'postgres';
import { loadConfig } from '../../src/config/config.ts';
import { connectDatabase } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { toEventRow } from '../../src/inbox/event-row.ts';
import { insertEventsIfAbsent } from '../../src/inbox/insert-events.ts';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { enqueueWebhookJobs } from '../../src/queue/enqueue.ts';
import { EVENTS_PER_CHARGE, chargeHistories } from '../support/charge-histories.ts';
import { type CpuSplit, measureCpu } from '../support/cpu.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { type StatementProfile, readStatements, resetStatements } from '../support/statements.ts';

export interface ProcessingRun {
  /** Worker settings that differ from the product's defaults (empty = defaults). */
  env: Record<string, string>;
  events: number;
  charges: number;
  /** Worker ready → no pending row left (polled once a second, so up to a second long). */
  wallSeconds: number;
  /** events ÷ databaseSeconds: the rate the workers sustained. */
  eventsPerSecond: number;
  /** First to last processed_at, as the database recorded them. */
  databaseSeconds: number;
  statuses: Record<string, number>;
  /** Payments in their true final state (`refunded`), and transitions recorded. */
  paymentsRefunded: number;
  transitions: number;
  /** What the workers asked of PostgreSQL (pg_stat_statements), when available. */
  statements?: StatementProfile;
  /** CPU µs per event: the worker process, PostgreSQL, and the bench's own polling. */
  cpu: CpuSplit;
}

const BATCH = 1_000;

/**
 * Loads a backlog straight into the inbox with the product's own insert and enqueue (as the
 * receiver would have left it after an outage of the workers), then starts one worker-role
 * service (`node src/main.ts`, INBOX_ROLE=worker) and times pending → processed/ignored.
 */
export async function runProcessing(options: {
  databaseUrl: string;
  sql: postgres.Sql;
  charges: number;
  env: Record<string, string>;
  postmasterPid?: number;
  log: (line: string) => void;
}): Promise<ProcessingRun> {
  const { sql } = options;
  await applyMigrations(options.databaseUrl);
  const config = loadConfig({ WEBHOOK_SECRET_STRIPE: BENCH_SECRET, ...options.env }, () => '');
  const database = connectDatabase({ url: options.databaseUrl, poolSize: 4, connectTimeoutSeconds: 5, applicationName: 'bench-backlog' });
  const boss = await startBoss({ url: options.databaseUrl, role: 'receiver', worker: config.worker, poolSize: 2, connectTimeoutSeconds: 5, logger: createLogger('silent') });
  const events = chargeHistories('bench_', options.charges, BENCH_SECRET);
  const loadStarted = Date.now();
  try {
    for (let i = 0; i < events.length; i += BATCH) {
      await database.sql.begin(async (tx) => enqueueWebhookJobs(boss, tx, await insertEventsIfAbsent(tx, events.slice(i, i + BATCH).map(toEventRow))));
    }
  } finally {
    await boss.stop({ graceful: false, close: true });
    await database.close();
  }
  options.log(`  backlog: ${events.length} events over ${options.charges} charges stored with their jobs in ${((Date.now() - loadStarted) / 1000).toFixed(1)} s`);
  // Statistics as autovacuum leaves them within a round (src/queue/queues.ts asks it to re-analyze
  // the job table every 5,000 changed rows); planned from an empty table, pg-boss's fetch sorts the
  // whole backlog each time (175 ms vs 2.9 ms per fetch of 100, README "Benchmarks").
  await sql`analyze webhook_inbox`;
  await sql`analyze pgboss.job_common`;
  await resetStatements(sql);

  const worker = await startInbox(options.databaseUrl, { INBOX_ROLE: 'worker', ...options.env }, 'worker');
  const ready = Date.now();
  const workerCpu = measureCpu(worker.process.pid, options.postmasterPid);
  let cpu: CpuSplit | undefined;
  let done = 0;
  try {
    for (;;) {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_inbox where status = 'pending'`;
      if (row!.n === 0) {
        done = Date.now();
        cpu = workerCpu(events.length);
        break;
      }
      if (Date.now() - ready > 600_000) throw new Error(`processing did not finish in 10 minutes (${row!.n} pending)`);
      // Seldom: counting pending rows is itself a query the workers compete with.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  } finally {
    await worker.process.stop();
  }
  const statusRows = await sql<{ status: string; n: number }[]>`select status, count(*)::int as n from webhook_inbox group by status`;
  const [span] = await sql<{ seconds: number }[]>`select extract(epoch from max(processed_at) - min(processed_at))::float8 as seconds from webhook_inbox`;
  const [payments] = await sql<{ refunded: number; transitions: number }[]>`
    select (select count(*)::int from payments where status = 'refunded') as refunded, (select count(*)::int from payment_transitions) as transitions`;
  const statements = await readStatements(sql);
  const wallSeconds = (done - ready) / 1000;
  return {
    env: options.env,
    events: events.length,
    charges: options.charges,
    wallSeconds,
    eventsPerSecond: events.length / span!.seconds,
    databaseSeconds: span!.seconds,
    statuses: Object.fromEntries(statusRows.map((r) => [r.status, r.n])),
    paymentsRefunded: payments!.refunded,
    transitions: payments!.transitions,
    statements,
    cpu: cpu!,
  };
}

export { EVENTS_PER_CHARGE };
