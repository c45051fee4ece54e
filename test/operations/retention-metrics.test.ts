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
import { daysAgo, insertInboxRows, startCronInstance, useOperationsHarness } from './harness.ts';

const h = useOperationsHarness();
let archiveDir: string;

before(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inbox-retention-metrics-'));
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

describe('the retention job’s metrics', () => {
  test('inbox_retention_deleted_events_total counts the rows of a month dropped whole, per provider', async () => {
    // A partition of its own for February 2024: the month goes whole (archived, then dropped).
    await h.database.sql.begin((tx) => createMonthPartitionsAhead(postgresExecutor(tx), new Date('2024-02-10T00:00:00Z'), 0));
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_feb_1', status: 'processed', receivedAt: new Date('2024-02-03T04:05:06Z') },
      { eventId: 'evt_feb_2', status: 'ignored', receivedAt: new Date('2024-02-20T04:05:06Z') },
      { eventId: 'evt_feb_3', provider: 'asaas', status: 'processed', receivedAt: new Date('2024-02-21T04:05:06Z') },
      { eventId: 'evt_old_row_by_row', status: 'processed', receivedAt: daysAgo(40) },
    ]);
    const config = testConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_retention_metrics', WEBHOOK_SECRET_ASAAS: 'asaas_token' });
    const metrics = createMetrics({ defaultMetrics: false });
    await startCronInstance(h, config, { retentionCron: '* * * * *', sweepCron: '0 0 1 1 *', archiveDir }, metrics.operations);
    await waitFor(
      async () => {
        const [row] = await h.database.sql`select count(*)::int as n from pgboss.job where name = ${RETENTION_QUEUE} and state = 'completed'`;
        return row!.n > 0;
      },
      { message: 'a completed retention run', timeoutMs: 30_000 },
    );
    assert.deepEqual(
      (await h.database.sql`select event_id from webhook_inbox`).map((r) => r.event_id),
      [],
      'every row went: February whole, the other row by row',
    );
    const deleted = (await metrics.registry.getSingleMetric('inbox_retention_deleted_events_total')!.get()).values;
    const byProvider = Object.fromEntries(deleted.map((v) => [v.labels.provider, v.value]));
    // README: "Retention runs and the rows they archived and deleted": every row, whichever way it went.
    assert.deepEqual(byProvider, { stripe: 3, asaas: 1 });
  });
});
