import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { postgresExecutor } from '../../src/db/client.ts';
import { createMonthPartitionsAhead } from '../../src/db/inbox-partitions.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { RETENTION_QUEUE } from '../../src/operations/cron.ts';
import { testConfig } from '../support/config.ts';
import { waitFor } from '../support/wait.ts';
import { insertInboxRows, startCronInstance, useOperationsHarness } from './harness.ts';

// Found by review: a retention run that failed part-way counted no deleted rows (the metric was
// told `error` and nothing else), though the months it dropped and the batches it deleted before
// the failure were archived, deleted and committed.

const h = useOperationsHarness();
let archiveDir: string;

before(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inbox-retention-stopped-'));
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

describe('a retention run that fails part-way', () => {
  test('counts in inbox_retention_deleted_events_total the rows it archived and deleted before the failure', async () => {
    await h.database.sql.begin(async (tx) => {
      await createMonthPartitionsAhead(postgresExecutor(tx), new Date('2024-01-10T00:00:00Z'), 1);
    });
    // January goes whole; February is kept for its pending row, its settled rows go one batch at a
    // time, and the second batch is refused.
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_jan', status: 'processed', receivedAt: new Date('2024-01-05T10:00:00Z') },
      { eventId: 'evt_feb_pending', status: 'pending', receivedAt: new Date('2024-02-03T10:00:00Z') },
      { eventId: 'evt_feb_1', status: 'processed', receivedAt: new Date('2024-02-04T10:00:00Z') },
      { eventId: 'evt_feb_2_stop', status: 'processed', receivedAt: new Date('2024-02-05T10:00:00Z') },
    ]);
    await h.database.sql.unsafe(`
      create function refuse_delete() returns trigger language plpgsql as $$ begin raise exception 'no space left on device (simulated)'; end $$;
      create trigger refuse_delete before delete on webhook_inbox for each row when (old.event_id = 'evt_feb_2_stop') execute function refuse_delete();`);
    const metrics = createMetrics({ defaultMetrics: false });
    const config = testConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_retention_stopped' });
    await startCronInstance(h, config, { retentionCron: '* * * * *', sweepCron: '0 0 1 1 *', archiveDir, retentionBatchSize: 1 }, metrics.operations);
    await waitFor(
      async () => {
        const [row] = await h.database.sql`select count(*)::int as n from pgboss.job where name = ${RETENTION_QUEUE} and state = 'failed'`;
        return row!.n > 0;
      },
      { message: 'a failed retention run', timeoutMs: 30_000 },
    );

    const left = await h.database.sql`select event_id from webhook_inbox order by event_id`;
    assert.deepEqual(
      left.map((r) => r.event_id),
      ['evt_feb_2_stop', 'evt_feb_pending'],
      'January and the first batch went before the failure',
    );
    const values = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values;
    const runs = Object.fromEntries((await values('inbox_retention_runs_total')).map((v) => [v.labels.outcome, v.value]));
    assert.ok(runs.error! >= 1 && runs.ok === undefined, `runs: ${JSON.stringify(runs)}`);
    const deleted = Object.fromEntries((await values('inbox_retention_deleted_events_total')).map((v) => [v.labels.provider, v.value]));
    assert.deepEqual(deleted, { stripe: 2 }, "January's row, dropped with its month, and evt_feb_1, deleted by the first batch");
  });
});
