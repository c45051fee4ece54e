import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let env: Record<string, string>;
const threeHoursAgo = new Date(Date.now() - 3 * 3_600_000);

setup(async () => {
  // stripe: its last delivery 3 hours ago, then a backfill that found a newer event (the endpoint
  // is silent; the API is not). asaas is configured and never delivered anything.
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_last_delivery', WEBHOOK_SECRET_ASAAS: 'asaas_token_last_delivery' };
  await insertInboxRows(database.sql, [
    { eventId: 'evt_delivered_old', status: 'processed', receivedAt: new Date(threeHoursAgo.getTime() - 3_600_000) },
    { eventId: 'evt_delivered', status: 'processed', receivedAt: threeHoursAgo },
    { eventId: 'evt_backfilled', status: 'processed', receivedAt: new Date(Date.now() - 60_000) },
  ]);
  await database.sql`update webhook_inbox set source = 'backfill' where event_id = 'evt_backfilled'`;
});

describe('inboxctl stats: the last delivery per provider', () => {
  test('shows when each configured provider last delivered, backfilled rows aside, and "never" for one that never did', async () => {
    const run = await runInboxctl(['stats'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.out, /Last delivery \(webhook, all time\):\n {2}asaas {3}never\n {2}stripe {2}(2h59m|3h00m|3h01m) ago \(/);
    assert.ok(run.out.includes(`(${threeHoursAgo.toISOString()})`), run.out);

    const json = (await runInboxctl(['stats', '--json'], env)).json();
    assert.deepEqual(json.lastDeliveries, [
      { provider: 'asaas', receivedAt: null },
      { provider: 'stripe', receivedAt: threeHoursAgo.toISOString() },
    ]);

    const one = (await runInboxctl(['stats', '--provider', 'stripe', '--json'], env)).json();
    assert.deepEqual(
      one.lastDeliveries.map((d: { provider: string }) => d.provider),
      ['stripe'],
    );
  });

  test('with --since the last delivery is still all time: a delivery before the window shows, a backfill inside it does not count', async () => {
    // stats looks in the window first (cheap on a long history); stripe delivered nothing in the last hour but the backfill.
    const json = (await runInboxctl(['stats', '--since', '1h', '--json'], env)).json();
    assert.deepEqual(json.lastDeliveries, [
      { provider: 'asaas', receivedAt: null },
      { provider: 'stripe', receivedAt: threeHoursAgo.toISOString() },
    ]);
  });
});
