import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { TestClock } from 'pg-boss';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Behaviour, type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { type PaymentRow, allDelivered, laneOf, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const BASE = 1_760_000_000;
const MAX_ATTEMPTS = 4;
// Three lanes fail at once here; the destination as a whole must not be blamed for them. The
// timeout runs on the test's clock (pg-boss's TestClock, ticked by hand): the hanging lane's
// attempts end when the test says, and no good request can time out however loaded the machine.
const destinationOptions = { maxAttempts: MAX_ATTEMPTS, timeoutMs: 15_000, retryDelaySeconds: 0.2, retryDelayMaxSeconds: 0.5, backoffAfterFailingLanes: 5 };
const clock = new TestClock();

const database = useTestDatabase();
let consumer: Consumer;
let service: TestService;
let scratch: string;
let cliEnv: Record<string, string>;

/** The consumer's failure for each chosen payment, while `failing` holds. */
const failures: Record<string, Behaviour> = {
  ch_bad_500: { kind: 'status', status: 500 },
  ch_bad_timeout: { kind: 'hang' },
  ch_bad_hangup: { kind: 'hang_up' },
};
let failing = true;

setup(async () => {
  // Registered first, so closed last: after the service has stopped (teardown runs last in, first out).
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  // Everything that does not fail is taken as the consumer of docs/consuming.md takes it: by sequence, 409 when early.
  consumer.behaviour = (event) => (failing ? (failures[event.chargeId] ?? { kind: 'docs_consumer' }) : { kind: 'docs_consumer' });
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-lanes-'));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: { app: destinationOptions } });
  await writeFile(configPath, configText);
  const env = { DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: secret, INBOX_CONFIG: configPath };
  cliEnv = { ...env, DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, ...env }, files: { [configPath]: configText }, deliveryTimers: clock });
});

/** A paid, then refunded charge: two status changes, so the second waits behind the first. */
async function payThenRefund(chargeId: string): Promise<void> {
  const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE });
  const refunded = chargeEvent({ id: `evt_${chargeId}_refund`, type: 'charge.refunded', chargeId, created: BASE + 60, amountRefunded: 2000 });
  assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
  // Sent once the payment is paid: two status changes, two events in the lane, whatever order
  // pg-boss would have run the two jobs in (see settledPayments).
  await waitUntilSettled(database.sql, [`evt_${chargeId}_paid`], 60_000);
  assert.equal((await postStripe(service.baseUrl, refunded, SECRET)).status, 200);
}

/**
 * Once both events of every charge are settled: two status changes each, since the refund is
 * sent only after the payment is paid (were both queued at once, pg-boss may run the refund first,
 * and the late `paid` is then ignored as stale: one status change, one event — also right).
 */
async function settledPayments(chargeIds: readonly string[]): Promise<PaymentRow[]> {
  await waitUntilSettled(
    database.sql,
    chargeIds.flatMap((c) => [`evt_${c}_paid`, `evt_${c}_refund`]),
    60_000,
  );
  const rows = await paymentsOf(database.sql, chargeIds);
  assert.equal(rows.length, chargeIds.length, 'a payment for every charge');
  return rows;
}

describe('lanes park, and only their own payment waits', () => {
  const bad = Object.keys(failures);
  const good = Array.from({ length: 100 }, (_, n) => `ch_good_${n}`);

  test('a 500, a timeout and a hang-up each park their lane after maxAttempts while 100 other payments are all delivered', async () => {
    await Promise.all([...bad, ...good].map(payThenRefund));
    const payments = await settledPayments([...bad, ...good]);
    const byCharge = new Map(payments.map((p) => [p.chargeId, p]));
    const parkedLane = (chargeId: string) =>
      waitFor(
        async () => {
          const row = await laneOf(database.sql, 'app', byCharge.get(chargeId)!.id);
          return row?.parked ? row : undefined;
        },
        { message: `${chargeId}'s lane to park`, timeoutMs: 60_000 },
      );
    const lanes = new Map([
      ['ch_bad_500', await parkedLane('ch_bad_500')],
      ['ch_bad_hangup', await parkedLane('ch_bad_hangup')],
    ]);
    await waitFor(
      () =>
        allDelivered(
          consumer,
          good.map((c) => byCharge.get(c)!),
        ),
      { message: 'the 100 other payments delivered', timeoutMs: 30_000 },
    );
    // Nothing else is in flight now: each tick of the clock ends exactly the hanging attempt.
    const timeoutLane = byCharge.get('ch_bad_timeout')!.id;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
      await waitFor(() => consumer.hanging === 1 && consumer.received.filter((e) => e.chargeId === 'ch_bad_timeout').length === attempt, {
        message: `attempt ${attempt} hanging at the consumer`,
      });
      await clock.tick(destinationOptions.timeoutMs);
      await waitFor(async () => (await laneOf(database.sql, 'app', timeoutLane))?.attempts === attempt, {
        message: `attempt ${attempt} timed out and recorded`,
      });
    }
    lanes.set('ch_bad_timeout', await parkedLane('ch_bad_timeout'));
    assert.match(lanes.get('ch_bad_timeout')!.lastError ?? '', /no answer within 15000 ms/);
    for (const chargeId of bad) {
      const lane = lanes.get(chargeId)!;
      assert.equal(lane.attempts, MAX_ATTEMPTS, chargeId);
      assert.equal(lane.deliveredSequence, 0, `${chargeId}: its first event never got a 2xx`);
      const tries = consumer.received.filter((e) => e.chargeId === chargeId);
      assert.equal(tries.length, MAX_ATTEMPTS, `${chargeId}: tried exactly maxAttempts times`);
      assert.ok(
        tries.every((e) => e.sequence === 1),
        `${chargeId}: its later event waited behind the failing one`,
      );
      assert.equal(new Set(tries.map((e) => e.webhookId)).size, 1, `${chargeId}: every resend carries the same webhook-id`);
    }
    for (const chargeId of good) {
      const lane = await laneOf(database.sql, 'app', byCharge.get(chargeId)!.id);
      const events = byCharge.get(chargeId)!.eventSequence;
      assert.deepEqual(
        { delivered: lane?.deliveredSequence, attempts: lane?.attempts, parked: lane?.parked },
        { delivered: events, attempts: 0, parked: false },
        chargeId,
      );
      assert.equal(consumer.received.filter((e) => e.chargeId === chargeId).length, events, `${chargeId}: each event once, no failed attempt`);
    }
    const destination = await database.sql`select backoff_trips from delivery_destinations where name = 'app'`;
    assert.ok(destination.length === 0 || destination[0]!.backoff_trips === 0, 'three failing lanes did not back the destination off');
  });

  test('inboxctl lanes --parked lists exactly the parked lanes and exits 1', async () => {
    const run = await runInboxctl(['lanes', '--parked', '--json'], cliEnv);
    assert.equal(run.code, 1, run.stderr);
    const listed = run.json<{ lanes: { chargeId: string; parkedAt: string | null }[]; destinations: { name: string; parkedLanes: number }[] }>();
    assert.deepEqual(listed.lanes.map((l) => l.chargeId).sort(), [...bad].sort());
    assert.deepEqual(
      listed.destinations.map((d) => [d.name, d.parkedLanes]),
      [['app', 3]],
    );
    const text = await runInboxctl(['lanes'], cliEnv);
    assert.match(text.out, /PARKED\s+app\s+stripe:ch_bad_500\s+0\/2\s+4/);
  });

  test("once the consumer recovers, inboxctl lanes retry delivers the parked events in order; skip gives up the head event with its reason recorded, and the docs' consumer takes the next event, which says what it follows", async () => {
    failing = false;
    for (const chargeId of ['ch_bad_500', 'ch_bad_timeout']) {
      const run = await runInboxctl(['lanes', 'retry', 'app', `stripe:${chargeId}`], cliEnv);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.out, /unparked/);
    }
    const skip = await runInboxctl(['lanes', 'skip', 'app', 'stripe:ch_bad_hangup', '--reason', 'order deleted in the app'], cliEnv);
    assert.equal(skip.code, 0, skip.stderr);
    const payments = await paymentsOf(database.sql, bad);
    await waitFor(
      async () => {
        for (const p of payments) if ((await laneOf(database.sql, 'app', p.id))?.deliveredSequence !== 2) return false;
        return true;
      },
      { message: 'the retried and skipped lanes caught up', timeoutMs: 30_000 },
    );
    for (const chargeId of ['ch_bad_500', 'ch_bad_timeout']) {
      const { applied, inOrder } = applyBySequence(consumer.acceptedFor(chargeId));
      assert.ok(inOrder, chargeId);
      assert.deepEqual(
        applied.map((e) => e.type),
        ['payment.paid', 'payment.refunded'],
        chargeId,
      );
    }
    assert.deepEqual(
      consumer.acceptedFor('ch_bad_hangup').map((e) => e.sequence),
      [2],
      'the skipped event is not sent, the one after it is',
    );
    // Found from outside: the README's consumer answered 409 to event 2 with no 1 ("cannot happen"), and the lane parked again.
    const afterSkip = consumer.received.filter((e) => e.chargeId === 'ch_bad_hangup' && e.sequence === 2);
    assert.deepEqual(
      afterSkip.map((e) => [e.followsSequence, e.accepted]),
      [[0, true]],
      'sent once, saying it follows nothing sent before (event 1 was skipped), and applied',
    );
    assert.equal(consumer.docs.applied.get('stripe:ch_bad_hangup'), 2);
    for (const chargeId of ['ch_bad_500', 'ch_bad_timeout']) {
      assert.deepEqual(
        consumer.acceptedFor(chargeId).map((e) => [e.sequence, e.followsSequence]),
        [
          [1, 0],
          [2, 1],
        ],
        `${chargeId}: nothing skipped, each follows the one before`,
      );
    }
    const [skipped] = await database.sql`
      select l.skipped_events, l.last_skip_reason from delivery_lanes l join payments p on p.id = l.payment_id
      where p.gateway_charge_id = 'ch_bad_hangup'`;
    assert.deepEqual({ ...skipped }, { skipped_events: 1, last_skip_reason: 'order deleted in the app' });
    const again = await runInboxctl(['lanes', 'skip', 'app', 'stripe:ch_bad_hangup', '--reason', 'x'], cliEnv);
    assert.equal(again.code, 2, 'a lane that is not parked cannot be skipped');
    const list = await runInboxctl(['lanes', '--parked'], cliEnv);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.out, /No parked lane/);
  });
});
