import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RETENTION_QUEUE } from '../../src/operations/cron.ts';
import { testConfig } from '../support/config.ts';
import { waitFor } from '../support/wait.ts';
import { daysAgo, insertInboxRows, startCronInstance, useOperationsHarness } from './harness.ts';

const h = useOperationsHarness();
let archiveDir: string;

before(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inbox-retention-cron-'));
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

describe('the retention job on pg-boss cron', () => {
  test('archives and deletes what is past the window, keeps the rest', async () => {
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_expired', status: 'processed', receivedAt: new Date('2024-02-03T04:05:06Z') },
      { eventId: 'evt_kept', status: 'processed', receivedAt: daysAgo(29) },
    ]);
    const config = testConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_retention_cron' });
    // Every minute, so the schedule is due as soon as it is registered; the sweep never.
    await startCronInstance(h, config, { retentionCron: '* * * * *', sweepCron: '0 0 1 1 *', archiveDir });
    await waitFor(
      async () => {
        const [row] = await h.database.sql`select count(*)::int as n from pgboss.job where name = ${RETENTION_QUEUE} and state = 'completed'`;
        return row!.n > 0;
      },
      { message: 'a completed retention run', timeoutMs: 30_000 },
    );
    const left = await h.database.sql`select event_id from webhook_inbox order by event_id`;
    assert.deepEqual(
      left.map((r) => r.event_id),
      ['evt_kept'],
    );
    assert.ok(existsSync(path.join(archiveDir, 'stripe', 'stripe-2024-02-03.jsonl.gz')));
  });
});
