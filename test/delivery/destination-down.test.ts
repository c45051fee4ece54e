import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Behaviour, type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { deliveriesSettled, passDeliveryTime, secondsToLastDeadline } from './support/delivery-time.ts';
import { allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

// Two destinations that answer no 2xx at all: `down` with 503 (no Retry-After), `limited` with 429
// and `Retry-After: 0` to everything. Each backs off as a whole, and no lane parks. The waits are
// the database's deadlines, long (30 s and up) and moved on by the test (support/delivery-time.ts):
// no lane can retry before the test says, so however slowly the machine processes the 20 charges,
// the fifth failing lane is seen before any lane could spend a second attempt. (With real waits of
// 0.2 s this test flaked under load: lanes retried and parked before five had failed.)

const BASE = 1_760_000_000;
const MAX_ATTEMPTS = 3;
const common = { maxAttempts: MAX_ATTEMPTS, retryDelaySeconds: 30, retryDelayMaxSeconds: 600, backoffAfterFailingLanes: 5 };
// patienceSeconds 0: its 429s count as attempts at once, so only the backoff as a whole keeps its lanes from parking.
const destinationOptions = { down: common, limited: { ...common, patienceSeconds: 0 } };
const CHARGES = Array.from({ length: 20 }, (_, n) => `ch_down_${n}`);
const refusal: Record<keyof typeof destinationOptions, Behaviour> = {
  down: { kind: 'status', status: 503 },
  limited: { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
};

const database = useTestDatabase();
const consumers = new Map<string, Consumer>();
let scratch: string;
let service: TestService;
/** The consumers refuse every request while this holds: each destination is down or limited, not one lane. */
let refusing = true;

setup(async () => {
  // Registered first, so closed last: after the service has stopped (teardown runs last in, first out).
  database.onTeardown(() => Promise.all([...consumers.values()].map((c) => c.close())));
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  const env: Record<string, string> = { WEBHOOK_SECRET_STRIPE: SECRET };
  for (const name of ['down', 'limited'] as const) {
    const secret = newDestinationSecret();
    const consumer = await startConsumer(secret);
    consumer.behaviour = () => (refusing ? refusal[name] : { kind: 'ok' });
    consumers.set(name, consumer);
    Object.assign(env, { [`DESTINATION_URL_${name.toUpperCase()}`]: consumer.url, [`DESTINATION_SECRET_${name.toUpperCase()}`]: secret });
  }
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-down-'));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: destinationOptions });
  await writeFile(configPath, configText);
  service = await startTestService({ database, env: { ...env, INBOX_CONFIG: configPath }, files: { [configPath]: configText } });
});

async function destinationStates(): Promise<Map<string, { trips: number; backingOff: boolean }>> {
  const rows = await database.sql`select name, backoff_trips, backoff_until > now() as backing_off from delivery_destinations`;
  return new Map(rows.map((r) => [r.name as string, { trips: r.backoff_trips as number, backingOff: r.backing_off === true }]));
}

async function lanesOf(destination: string): Promise<{ parked: number; mostAttempts: number; lanes: number }> {
  const [row] = await database.sql`
    select count(*) filter (where parked_at is not null)::int as parked, coalesce(max(attempts), 0)::int as most, count(*)::int as lanes
    from delivery_lanes where destination = ${destination}`;
  return { parked: row!.parked, mostAttempts: row!.most, lanes: row!.lanes };
}

/** Until nothing of the push side runs or is due, and both destinations have backed off `trips` times. */
async function settledAfterTrips(trips: number): Promise<void> {
  await waitFor(
    async () => {
      if (!(await deliveriesSettled(database.sql))) return false;
      const states = await destinationStates();
      return ['down', 'limited'].every((name) => (states.get(name)?.trips ?? 0) >= trips);
    },
    { message: `both destinations backing off as a whole (${trips} trips)`, timeoutMs: 60_000 },
  );
}

describe('a destination that answers no 2xx at all (503; or 429 with Retry-After: 0) backs off as a whole', () => {
  test('it backs off, its probe fails and it backs off again: no lane parks or spends its attempts meanwhile', async () => {
    for (const [n, chargeId] of CHARGES.entries()) {
      const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE + n });
      assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
    }
    await settledAfterTrips(1);
    // Past every wait: the backoff's end brings the probes, which fail, and a second backoff.
    await passDeliveryTime(database.sql, (await secondsToLastDeadline(database.sql)) + 1);
    await settledAfterTrips(2);
    for (const name of ['down', 'limited']) {
      const lanes = await lanesOf(name);
      assert.equal(lanes.parked, 0, `${name}: no lane parked while the whole destination was refusing`);
      assert.ok(lanes.mostAttempts < MAX_ATTEMPTS, `${name}: no lane spent its attempts (most: ${lanes.mostAttempts})`);
      assert.ok((await destinationStates()).get(name)!.backingOff, `${name}: backing off now`);
      assert.ok(consumers.get(name)!.received.length >= 5, `${name}: tried`);
    }
  });

  test('once it answers, the first 2xx ends the backoff and every payment is delivered in order', async () => {
    refusing = false;
    await passDeliveryTime(database.sql, (await secondsToLastDeadline(database.sql)) + 1);
    const payments = await paymentsOf(database.sql, CHARGES);
    assert.equal(payments.length, CHARGES.length);
    for (const [name, consumer] of consumers) {
      await waitFor(() => allDelivered(consumer, payments), { message: `${name}: every payment delivered once it answers`, timeoutMs: 60_000 });
      for (const payment of payments) assert.ok(applyBySequence(consumer.acceptedFor(payment.chargeId)).inOrder, `${name}: ${payment.chargeId}`);
      assert.equal(consumer.unverified, 0);
    }
    // The consumer's 2xx comes before the service records it (and the probe's end of the backoff): wait for the record.
    await waitFor(async () => [...(await destinationStates()).values()].every((d) => d.trips === 0 && !d.backingOff), {
      message: 'the first 2xx ending both backoffs',
    });
  });
});
