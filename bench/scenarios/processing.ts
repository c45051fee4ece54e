import type postgres from 'postgres';
import { loadBacklog } from '../support/backlog.ts';
import { type CpuSplit, measureCpu } from '../support/cpu.ts';
import { startInbox } from '../support/services.ts';
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

/**
 * Loads a backlog (bench/support/backlog.ts), then starts one worker-role service
 * (`node src/main.ts`, INBOX_ROLE=worker) and times pending → processed/ignored.
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
  const backlog = await loadBacklog({ databaseUrl: options.databaseUrl, sql, charges: options.charges, prefix: 'bench_', env: options.env });
  options.log(`  backlog: ${backlog.events} events over ${options.charges} charges stored with their jobs in ${backlog.seconds.toFixed(1)} s`);
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
        cpu = workerCpu(backlog.events);
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
    events: backlog.events,
    charges: options.charges,
    wallSeconds,
    eventsPerSecond: backlog.events / span!.seconds,
    databaseSeconds: span!.seconds,
    statuses: Object.fromEntries(statusRows.map((r) => [r.status, r.n])),
    paymentsRefunded: payments!.refunded,
    transitions: payments!.transitions,
    statements,
    cpu: cpu!,
  };
}
