import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DatabaseHandle, drizzleExecutor } from '../../src/db/client.ts';
import { settledLagByProvider } from '../../src/inbox/sql/lag.ts';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows, minutesAgo } from './harness.ts';

const database = useTestDatabase();
let handle: DatabaseHandle;
const now = new Date();
const settledAfter = (receivedAt: Date, seconds: number) => new Date(receivedAt.getTime() + seconds * 1000);

setup(async () => {
  handle = database.connect('lag-agreement-test');
  const at = (minutes: number) => minutesAgo(minutes, now);
  // Within the last hour: processed after 1, 2, 3 s, ignored after 10 and 20 s. Settled lags
  // 1, 2, 3, 10, 20: p50 3, p99 19.6 (percentile_cont). Processed alone would say p50 2, p99 2.98.
  await insertInboxRows(database.sql, [
    { eventId: 'p1', status: 'processed', receivedAt: at(10), processedAt: settledAfter(at(10), 1) },
    { eventId: 'p2', status: 'processed', receivedAt: at(20), processedAt: settledAfter(at(20), 2) },
    { eventId: 'p3', status: 'processed', receivedAt: at(30), processedAt: settledAfter(at(30), 3) },
    { eventId: 'i1', status: 'ignored', receivedAt: at(15), processedAt: settledAfter(at(15), 10) },
    { eventId: 'i2', status: 'ignored', receivedAt: at(25), processedAt: settledAfter(at(25), 20) },
    // Not settled, not in the hour, or with no settling time: in neither figure.
    { eventId: 'f1', status: 'failed', receivedAt: at(12), lastError: 'boom' },
    { eventId: 'q1', status: 'pending', receivedAt: at(5) },
    { eventId: 'i_restored', status: 'ignored', receivedAt: at(40), processedAt: null },
    { eventId: 'p_earlier', status: 'processed', receivedAt: at(120), processedAt: settledAfter(at(120), 100) },
  ]);
});

describe('one lag: received → settled (processed or ignored)', () => {
  test("the dashboard's last-hour lag and `inboxctl stats --since 1h` give the same figures for the same rows", async () => {
    const dashboard = (await settledLagByProvider(drizzleExecutor(handle.db), now)).find((p) => p.provider === 'stripe');
    assert.ok(dashboard, 'the dashboard has a lag for stripe');
    const run = await runInboxctl(['stats', '--since', '1h', '--json'], { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_lag' });
    const stats = run.json();

    assert.equal(dashboard.lastHour.events, 5);
    assert.equal(stats.lag.sampleSize, 5, 'the same five settled events');
    assert.equal(dashboard.lastHour.p50Seconds, 3);
    assert.equal(stats.lag.processing.p50, 3);
    assert.equal(Math.round(dashboard.lastHour.p99Seconds! * 1000) / 1000, 19.6);
    assert.equal(stats.lag.processing.p99, 19.6);
    assert.equal(stats.lag.processing.max, 20, 'the ignored event that waited longest counts');
  });
});
