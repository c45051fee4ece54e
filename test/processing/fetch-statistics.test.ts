import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { type DatabaseHandle, postgresExecutor } from '../../src/db/client.ts';
import { toEventRow } from '../../src/inbox/event-row.ts';
import { storeNewEvents } from '../../src/inbox/sql/store-events.ts';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { type EmbeddedJobInsert, webhookJobInsert } from '../../src/queue/embedded-job-insert.ts';
import { type JobTableAnalyzer, startJobTableAnalyzer } from '../../src/queue/job-table-statistics.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { testWorkerConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { incomingChargeSucceeded } from '../support/incoming-event.ts';
import { waitFor } from '../support/wait.ts';

const database = useTestDatabase();
let handle: DatabaseHandle;
let boss: PgBoss;
let jobs: EmbeddedJobInsert;
let jobTable: string;
let analyzer: JobTableAnalyzer;

setup(async () => {
  handle = database.connect('fetch-statistics-test');
  boss = await startBoss({
    url: database.url,
    role: 'receiver',
    worker: testWorkerConfig,
    poolSize: 2,
    connectTimeoutSeconds: 5,
    logger: createLogger('silent'),
  });
  database.onTeardown(() => boss.stop({ graceful: false, close: true }));
  jobs = await webhookJobInsert(boss);
  jobTable = `pgboss.${(await boss.getQueue(WEBHOOKS_QUEUE))!.table}`;
  // Only the test's own check() calls: the timer would race the preconditions.
  // No floor between analyzes here (the test's own ANALYZE came just before): the last test checks the floor.
  analyzer = await startJobTableAnalyzer({ boss, queue: WEBHOOKS_QUEUE, intervalMs: 3_600_000, minSecondsBetweenAnalyzes: 0, logger: createLogger('silent') });
  database.onTeardown(() => analyzer.stop());
});

async function queueEvents(prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - i) }, (_, j) => incomingChargeSucceeded(`${prefix}_${i + j}`));
    await storeNewEvents(postgresExecutor(handle.sql), jobs, batch.map(toEventRow));
  }
}

/** How many ready jobs the planner expects where pg-boss's fetch looks for them (its WHERE, job_common_i11's predicate). */
async function plannedReadyJobs(): Promise<number> {
  const [row] = await database.sql.unsafe<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }[]>(
    `explain (format json) select id from ${jobTable} where name = $1 and state < 'active' and not blocked and start_after <= now()`,
    [WEBHOOKS_QUEUE],
  );
  return row!['QUERY PLAN'][0].Plan['Plan Rows'];
}

describe("the job table's statistics follow a backlog that builds up at once", () => {
  test('analyzed while every job was completed, the planner expects none ready; past 5,000 changed rows a check re-analyzes and it expects the backlog', async () => {
    await queueEvents('evt_done', 500);
    await database.sql.unsafe(`update ${jobTable} set state = 'completed', started_on = now(), completed_on = now() where name = $1`, [WEBHOOKS_QUEUE]);
    await database.sql.unsafe(`analyze ${jobTable}`);
    assert.equal(await analyzer.check(), false, 'nothing changed since the analyze: no second one');

    await queueEvents('evt_backlog', 8_000);
    const stale = await plannedReadyJobs();
    assert.ok(stale < 100, `precondition: statistics from the completed table expect few ready jobs (planned ${stale} of 8,000)`);

    // The inserting connection reports its changes to pg_stat within a second or so of going idle.
    await waitFor(() => analyzer.check(), { message: 'a check to find 8,000 changed rows and analyze' });
    const fresh = await plannedReadyJobs();
    assert.ok(fresh > 4_000, `after the check the planner expects the backlog (planned ${fresh} of 8,000)`);
    assert.equal(await analyzer.check(), false, 'and does not analyze again until 5,000 more rows change');
  });

  test("an instance does not analyze again within 30 s of anyone's ANALYZE, however many rows changed", async () => {
    const another = await startJobTableAnalyzer({ boss, queue: WEBHOOKS_QUEUE, intervalMs: 3_600_000, logger: createLogger('silent') });
    database.onTeardown(() => another.stop());
    await database.sql.unsafe(`analyze ${jobTable}`);
    await queueEvents('evt_more', 6_000);
    await waitFor(
      async () => {
        const [row] = await database.sql.unsafe<{ changed: number }[]>(
          `select n_mod_since_analyze::int as changed from pg_stat_user_tables where relid = $1::regclass`,
          [jobTable],
        );
        return row!.changed >= 5_000;
      },
      { message: 'pg_stat to count 6,000 changed rows' },
    );
    assert.equal(await another.check(), false, 'analyzed moments ago: the floor holds it back');
    assert.equal(await analyzer.check(), true, 'the same table, without the floor, would be analyzed');
  });
});
