import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { scrape, sampleValue } from '../observability/prometheus-text.ts';
import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, startConsumer } from './support/consumer.ts';
import { deliveriesSettled, passDeliveryTime } from './support/delivery-time.ts';
import { newDestinationSecret, paymentsOf } from './support/lanes.ts';

// Found from outside: a destination removed from the configuration could not be retired. Its
// parked lanes stayed listed (`lanes --parked` exit 1 forever), its gauge stayed exported so the
// alert paged forever, `lanes retry|skip` refused it as not configured, and the only way out was SQL.

const BASE = 1_760_000_000;
const database = useTestDatabase();
let consumer: Consumer;
let scratch: string;
let service: TestService;
let configPath: string;
let configText: string;
const secret = newDestinationSecret();
const base = { WEBHOOK_SECRET_STRIPE: SECRET, METRICS_REFRESH_SECONDS: '1' };
let withOrders: Record<string, string>;
let cliEnv: Record<string, string>;

async function pay(chargeId: string, n: number): Promise<void> {
  const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE + n });
  assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
}

/** Lanes, jobs that would still run, and the state row of `orders`: what retiring must clear. */
async function leftOf(destination: string) {
  const [lanes] = await database.sql`select count(*)::int as n, count(parked_at)::int as parked from delivery_lanes where destination = ${destination}`;
  const [jobs] =
    await database.sql`select count(*)::int as n from pgboss.job where data->>'destination' = ${destination} and state in ('created', 'retry', 'active')`;
  const state = await database.sql`select name, starts_at, backoff_trips, disabled_at from delivery_destinations where name = ${destination}`;
  return { lanes: lanes!.n, parked: lanes!.parked, jobs: jobs!.n, state: state[0] };
}

setup(async () => {
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  consumer = await startConsumer(secret);
  consumer.behaviour = (event) => (event.chargeId.startsWith('ch_old_') ? { kind: 'status', status: 500 } : { kind: 'ok' });
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-retire-'));
  configPath = path.join(scratch, 'inbox.json');
  configText = JSON.stringify({ destinations: { orders: { maxAttempts: 2, retryDelaySeconds: 300, retryDelayMaxSeconds: 600 } } });
  await writeFile(configPath, configText);
  withOrders = { ...base, DESTINATION_URL_ORDERS: consumer.url, DESTINATION_SECRET_ORDERS: secret, INBOX_CONFIG: configPath };
  cliEnv = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  service = await startTestService({ database, env: withOrders, files: { [configPath]: configText } });
  // Three lanes parked (two failed attempts each), and a fourth failed once and waiting for its retry (a queued job).
  for (const [n, chargeId] of ['ch_old_0', 'ch_old_1', 'ch_old_2'].entries()) await pay(chargeId, n);
  await waitFor(async () => (await deliveriesSettled(database.sql)) && (await leftOf('orders')).lanes === 3, { message: 'three lanes failed once' });
  await passDeliveryTime(database.sql, 1200);
  await waitFor(async () => (await leftOf('orders')).parked === 3, { message: 'three lanes parked' });
  await pay('ch_old_3', 3);
  await waitFor(async () => (await deliveriesSettled(database.sql)) && (await leftOf('orders')).lanes === 4, {
    message: 'a fourth lane waiting for its retry',
  });
  // The destination is removed from the configuration.
  await service.stop();
  service = await startTestService({ database, env: base });
});

describe('retiring a destination removed from the configuration', () => {
  test('once removed, its lanes page no one: no parked-lanes series, one saying what is left to retire', async () => {
    const text = await waitFor(
      async () => {
        const metrics = await scrape(service.baseUrl);
        return sampleValue(metrics, 'inbox_unconfigured_destination_parked_lanes', { destination: 'orders' }) === 3 ? metrics : undefined;
      },
      { message: 'the gauges refreshed without orders' },
    );
    assert.equal(sampleValue(text, 'inbox_delivery_lanes_parked', { destination: 'orders' }), undefined);
    assert.equal(sampleValue(text, 'inbox_destination_disabled', { destination: 'orders' }), undefined);
    const listed = await runInboxctl(['lanes', '--parked'], cliEnv);
    assert.equal(listed.code, 1, listed.stderr);
    assert.match(listed.out, /^orders: NOT CONFIGURED here, no worker sends its lanes; if it was removed: `inboxctl lanes retire orders --reason <text>`$/m);
  });

  test('a destination still configured is refused, exit 2, nothing changed', async () => {
    const before = await leftOf('orders');
    const run = await runInboxctl(['lanes', 'retire', 'orders', '--reason', 'x'], {
      ...cliEnv,
      DESTINATION_URL_ORDERS: consumer.url,
      DESTINATION_SECRET_ORDERS: secret,
    });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /refused, nothing changed: "orders" is configured here \(DESTINATION_URL_ORDERS\); remove it from every instance's configuration first/,
    );
    assert.deepEqual(await leftOf('orders'), before);
    const noReason = await runInboxctl(['lanes', 'retire', 'orders'], cliEnv);
    assert.equal(noReason.code, 2);
    assert.match(noReason.stderr, /retire needs --reason <text>/);
  });

  test('the dry run says what it would clear and changes nothing; the real run clears lanes, jobs and state in one transaction and records who and why', async () => {
    const before = await leftOf('orders');
    assert.deepEqual([before.lanes, before.parked, before.jobs > 0, before.state !== undefined], [4, 3, true, true]);
    const dry = await runInboxctl(['lanes', 'retire', 'orders', '--reason', 'orders service decommissioned', '--dry-run'], cliEnv);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.out,
      new RegExp(
        `^orders: would clear 4 lanes \\(3 parked\\), ${before.jobs} queued jobs?, its start, backoff and disabled state \\(by \\S+: "orders service decommissioned"\\)\\.\\nDry run: nothing changed\\.$`,
        'm',
      ),
    );
    assert.deepEqual(await leftOf('orders'), before);

    const run = await runInboxctl(['lanes', 'retire', 'orders', '--reason', 'orders service decommissioned', '--by', 'alice', '--json'], cliEnv);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.json(), {
      destination: 'orders',
      lanes: 4,
      parkedLanes: 3,
      jobs: before.jobs,
      hadState: true,
      retired: true,
      by: 'alice',
      reason: 'orders service decommissioned',
      dryRun: false,
      lastRetirement: null,
    });
    assert.deepEqual(await leftOf('orders'), { lanes: 0, parked: 0, jobs: 0, state: undefined });
    const [recorded] =
      await database.sql`select retired_by, reason, lanes_cleared, parked_lanes_cleared, jobs_cleared from delivery_destination_retirements where destination = 'orders'`;
    assert.deepEqual(
      { ...recorded },
      { retired_by: 'alice', reason: 'orders service decommissioned', lanes_cleared: 4, parked_lanes_cleared: 3, jobs_cleared: before.jobs },
    );
    // The payments and their events stay: the outbox and the feed keep them.
    assert.equal((await paymentsOf(database.sql, ['ch_old_0', 'ch_old_1', 'ch_old_2', 'ch_old_3'])).length, 4);
  });

  test('afterwards no gauge names it, lanes --parked is clean, and retiring it again says when and by whom it was retired (exit 1)', async () => {
    await waitFor(
      async () => {
        const text = await scrape(service.baseUrl);
        return !text.includes('destination="orders"');
      },
      { message: 'no series of orders after a refresh' },
    );
    const listed = await runInboxctl(['lanes', '--parked'], cliEnv);
    assert.equal(listed.code, 0, listed.stderr);
    const again = await runInboxctl(['lanes', 'retire', 'orders', '--reason', 'again'], cliEnv);
    assert.equal(again.code, 1);
    assert.match(
      again.stderr,
      /nothing to retire: the database holds no lane, job or state of destination "orders" \(retired \S+ by alice: "orders service decommissioned"\)\./,
    );
  });

  test("a destination configured again under the same name starts clean: from now, nothing of the old lanes, the old payments' later changes only", async () => {
    const retiredAt = new Date();
    await service.stop();
    service = await startTestService({ database, env: withOrders, files: { [configPath]: configText } });
    const state = (await leftOf('orders')).state!;
    assert.ok(new Date(state.starts_at) >= new Date(retiredAt.getTime() - 1000), 'a new start');
    assert.deepEqual([state.backoff_trips, state.disabled_at], [0, null]);
    const triesBefore = consumer.received.length;
    consumer.behaviour = () => ({ kind: 'ok' });
    await pay('ch_new', 10);
    const refunded = chargeEvent({ id: 'evt_ch_old_0_refund', type: 'charge.refunded', chargeId: 'ch_old_0', created: BASE + 60, amountRefunded: 2000 });
    assert.equal((await postStripe(service.baseUrl, refunded, SECRET)).status, 200);
    await waitFor(() => consumer.received.length >= triesBefore + 2 && consumer.received.slice(triesBefore).every((e) => e.accepted), {
      message: "the new payment and the old one's refund delivered",
    });
    await waitFor(() => deliveriesSettled(database.sql), { message: 'nothing more to send' });
    const sent = consumer.received
      .slice(triesBefore)
      .map((e) => `${e.chargeId}#${e.sequence}^${e.followsSequence}`)
      .sort();
    assert.deepEqual(sent, ['ch_new#1^0', 'ch_old_0#2^0'], "the old payments' earlier events are not sent again; the refund says it follows nothing sent");
  });
});
