import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { refreshedGauges } from '../support/gauges.ts';

// The staleness alert reads the platform's runs: since runs are also made on a connected account's
// behalf, a platform whose runs stop part-way must not look reconciled because its accounts' runs
// complete. An account whose latest run stopped part-way is counted, per provider (no series per account).

const database = useTestDatabase();

async function insertRun(run: {
  provider: string;
  account: string | null;
  status: 'complete' | 'partial' | 'running';
  finishedAt: string | null;
  startedAt: string;
}) {
  await database.sql`
    insert into reconciliation_runs (provider, scope, account, since, until, status, started_at, finished_at)
    values (${run.provider}, 'window', ${run.account}, ${run.startedAt}::timestamptz - interval '1 day', ${run.startedAt}, ${run.status}, ${run.startedAt}, ${run.finishedAt})`;
}

test("the last complete run is the platform's; accounts whose latest run stopped part-way are counted", async () => {
  // The platform completed three days ago and has stopped part-way since; its accounts complete daily.
  await insertRun({ provider: 'stripe', account: null, status: 'complete', startedAt: '2026-12-01T03:00:00Z', finishedAt: '2026-12-01T03:05:00Z' });
  await insertRun({ provider: 'stripe', account: null, status: 'partial', startedAt: '2026-12-04T03:00:00Z', finishedAt: '2026-12-04T03:01:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Fine', status: 'complete', startedAt: '2026-12-04T03:10:00Z', finishedAt: '2026-12-04T03:11:00Z' });
  // acct_1Broken completed once, then stopped part-way; acct_1Mended stopped part-way, then completed.
  await insertRun({ provider: 'stripe', account: 'acct_1Broken', status: 'complete', startedAt: '2026-12-03T03:10:00Z', finishedAt: '2026-12-03T03:11:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Broken', status: 'partial', startedAt: '2026-12-04T03:12:00Z', finishedAt: '2026-12-04T03:13:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Mended', status: 'partial', startedAt: '2026-12-03T03:12:00Z', finishedAt: '2026-12-03T03:13:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Mended', status: 'complete', startedAt: '2026-12-04T03:14:00Z', finishedAt: '2026-12-04T03:15:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Broken2', status: 'complete', startedAt: '2026-12-03T03:20:00Z', finishedAt: '2026-12-03T03:21:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Broken2', status: 'partial', startedAt: '2026-12-04T03:20:00Z', finishedAt: '2026-12-04T03:21:00Z' });
  // A run still going says nothing yet: acct_1Busy counts by the partial run before it.
  await insertRun({ provider: 'stripe', account: 'acct_1Busy', status: 'partial', startedAt: '2026-12-03T03:16:00Z', finishedAt: '2026-12-03T03:17:00Z' });
  await insertRun({ provider: 'stripe', account: 'acct_1Busy', status: 'running', startedAt: '2026-12-04T03:16:00Z', finishedAt: null });

  const metrics = await refreshedGauges(database.connect('run-gauges-test').db, ['stripe', 'asaas']);

  const lastComplete = await metrics.registry.getSingleMetric('inbox_reconciliation_last_complete_run_timestamp_seconds')!.get();
  assert.deepEqual(
    lastComplete.values.map((v) => [v.labels.provider, new Date(v.value * 1000).toISOString()]),
    [['stripe', '2026-12-01T03:05:00.000Z']],
    "the platform's last complete run, not an account's newer one",
  );
  const incomplete = await metrics.registry.getSingleMetric('inbox_reconciliation_accounts_incomplete')!.get();
  assert.deepEqual(
    Object.fromEntries(incomplete.values.map((v) => [v.labels.provider, v.value])),
    { stripe: 3, asaas: 0 },
    'acct_1Broken, acct_1Broken2 and acct_1Busy (by their latest finished run; acct_1Mended completed since); a configured provider with none says 0, so an alert resolves',
  );
});
