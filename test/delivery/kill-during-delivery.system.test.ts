import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { scenarioWithArrivalArb, stripeEvents } from '../domain/charge-scenarios.ts';
import { freePort } from '../fault/support/private-cluster.ts';
import { type ServiceProcess, spawnService } from '../fault/support/service-process.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { type PaymentRow, allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const SECRET = 'whsec_push_kill_secret';
const BASE = 1_760_000_000;
const CHARGES = 60;
// A killed run's job comes back through its heartbeat (10 s, the least pg-boss takes), found by the
// restarted service's own supervisor; expiry stays far away.
const ENV = { WORKER_HEARTBEAT_SECONDS: '10', WORKER_EXPIRE_IN_SECONDS: '300', WORKER_POLLING_INTERVAL_SECONDS: '0.5', WORKER_RETRY_DELAY_SECONDS: '1' };

const database = useTestDatabase();
let consumer: Consumer;
let service: ServiceProcess | undefined;

setup(async () => {
  // Registered first, so closed last: after the service has stopped (teardown runs last in, first out).
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => service?.stop());
});

test('kill -9 of the service while it delivers, then a restart: no event lost, none out of order; repeats carry the same webhook-id', async (t) => {
  const destinationSecret = newDestinationSecret();
  consumer = await startConsumer(destinationSecret);
  // The kill comes from the consumer itself, at a request that arrives once every gateway event was
  // posted and 40 were accepted: a poll from the test could come too late on a loaded machine, after
  // every event was delivered. Slow answers, so the kill always finds POSTs in flight (some answered
  // by the consumer and never heard by the inbox).
  let armed = false;
  let acceptedBeforeKill = 0;
  let killed: Promise<void> | undefined;
  consumer.behaviour = () => {
    const accepted = consumer.received.filter((e) => e.accepted).length;
    if (armed && !killed && accepted >= 40) {
      acceptedBeforeKill = accepted;
      killed = service!.kill();
    }
    return { kind: 'ok', delayMs: 150 + Math.floor(Math.random() * 150) };
  };
  const env = {
    DATABASE_URL: database.url,
    WEBHOOK_SECRET_STRIPE: SECRET,
    DESTINATION_URL_APP: consumer.url,
    DESTINATION_SECRET_APP: destinationSecret,
    ...ENV,
  };
  service = await spawnService({ env, port: await freePort() });

  const cases = fc.sample(scenarioWithArrivalArb, { numRuns: CHARGES, seed: 13 });
  const chargeIds = cases.map((_, n) => `ch_kill_${n}`);
  await Promise.all(
    cases.map(async ({ scenario, arrival }, n) => {
      const events = stripeEvents(scenario, chargeIds[n]!, BASE);
      for (const index of arrival) assert.equal((await postStripe(service!.baseUrl, events[index]!.body, SECRET)).status, 200);
    }),
  );
  armed = true;
  await waitFor(() => killed !== undefined, { message: 'deliveries under way, then the kill', timeoutMs: 60_000 });
  await killed;
  consumer.behaviour = () => ({ kind: 'ok', delayMs: 150 + Math.floor(Math.random() * 150) });
  t.diagnostic(`killed after ${acceptedBeforeKill} accepted deliveries`);

  service = await spawnService({ env, port: await freePort() });
  let payments: PaymentRow[] = [];
  await waitFor(
    async () => {
      payments = await paymentsOf(database.sql, chargeIds);
      return payments.length === CHARGES && allDelivered(consumer, payments);
    },
    { message: 'every payment delivered up to its last event after the restart', timeoutMs: 120_000, intervalMs: 250 },
  );
  const total = payments.reduce((sum, p) => sum + p.eventSequence, 0);
  assert.ok(acceptedBeforeKill < total, `the kill came before the end (${acceptedBeforeKill} of ${total})`);
  let repeats = 0;
  for (const payment of payments) {
    const { applied, repeats: repeated, inOrder } = applyBySequence(consumer.acceptedFor(payment.chargeId));
    repeats += repeated;
    assert.ok(inOrder, `${payment.chargeId}: ${applied.map((e) => e.sequence).join(',')}`);
    assert.equal(applied.length, payment.eventSequence, `${payment.chargeId}: no event lost`);
    assert.equal(applied.at(-1)!.status, payment.status, payment.chargeId);
  }
  assert.equal(consumer.unverified, 0);
  t.diagnostic(`${total} events delivered across the kill; ${repeats} repeated with the same webhook-id (at least once)`);
});
