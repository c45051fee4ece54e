import type postgres from 'postgres';
import { loadConfig } from '../../src/config/load-config.ts';
import { connectDatabase, postgresExecutor } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { toEventRow } from '../../src/inbox/event-row.ts';
import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { storeNewEvents } from '../../src/inbox/sql/store-events.ts';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { webhookJobInsert } from '../../src/queue/embedded-job-insert.ts';
import { chargeHistories } from './charge-histories.ts';
import { BENCH_SECRET } from './services.ts';

const BATCH = 1_000;

/**
 * A backlog stored straight into a migrated database with the receiver's own statement (events and jobs),
 * as the receiver would have left it after an outage of the workers: `charges` charge histories
 * (ten events each, event ids `evt_<prefix>…`) or the `events` given, every event pending with its job.
 */
export async function loadBacklog(options: {
  databaseUrl: string;
  sql: postgres.Sql;
  charges: number;
  prefix: string;
  /** Worker settings the queue is created with (tuning runs); the product's defaults otherwise. */
  env: Record<string, string>;
  /** Stored instead of the charge histories (then `charges` is not read). */
  events?: IncomingEvent[];
}): Promise<{ events: number; seconds: number }> {
  await applyMigrations(options.databaseUrl);
  const config = loadConfig({ WEBHOOK_SECRET_STRIPE: BENCH_SECRET, ...options.env }, () => '');
  const database = connectDatabase({ url: options.databaseUrl, poolSize: 4, connectTimeoutSeconds: 5, applicationName: 'bench-backlog' });
  const boss = await startBoss({
    url: options.databaseUrl,
    role: 'receiver',
    worker: config.worker,
    poolSize: 2,
    connectTimeoutSeconds: 5,
    logger: createLogger('silent'),
  });
  const events = options.events ?? chargeHistories(options.prefix, options.charges, BENCH_SECRET);
  const started = Date.now();
  try {
    const jobs = await webhookJobInsert(boss);
    const pool = postgresExecutor(database.sql);
    for (let i = 0; i < events.length; i += BATCH) await storeNewEvents(pool, jobs, events.slice(i, i + BATCH).map(toEventRow));
  } finally {
    await boss.stop({ graceful: false, close: true });
    await database.close();
  }
  const seconds = (Date.now() - started) / 1000;
  // Statistics as autovacuum leaves them within a round (src/queue/queues.ts asks it to re-analyze
  // the job table every 5,000 changed rows); planned from an empty table, pg-boss's fetch sorts the
  // whole backlog each time (175 ms vs 2.9 ms per fetch of 100, README "Benchmarks").
  await options.sql`analyze webhook_inbox`;
  await options.sql`analyze pgboss.job_common`;
  return { events: events.length, seconds };
}

/** Backlog events (ids `evt_<prefix>…`) still pending. */
export async function pendingBacklog(sql: postgres.Sql, prefix: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_inbox where status = 'pending' and event_id like ${`evt_${prefix}%`}`;
  return row!.n;
}
