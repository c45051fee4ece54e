import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { scenarioWithArrivalArb, stripeEvents } from '../domain/charge-scenarios.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { inParallel } from './support/histories.ts';
import { allDelivered, eventIdsOf, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const BASE = 1_760_000_000;
const HISTORIES = 200;
const database = useTestDatabase();
let consumer: Consumer;
let service: TestService;

setup(async () => {
  // Registered first, so closed last: after the service has stopped (teardown runs last in, first out).
  database.onTeardown(() => consumer?.close());
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: secret } });
});

describe('push: every payment reaches the destination in order', () => {
  test(`${HISTORIES} random charge histories, posted in random order with duplicates: per payment the consumer verifies 1..n in order, no gap, ending at the payments row`, async () => {
    const seed = Date.now() % 2_147_483_647;
    const cases = fc.sample(scenarioWithArrivalArb, { numRuns: HISTORIES, seed });
    const chargeIds = cases.map((_, n) => `ch_push_${n}`);
    // A consumer a little slow to answer: changes pile up behind the one in flight, so runs send
    // several events of a lane in a row (a lane one event deep would pass in any order).
    consumer.behaviour = () => ({ kind: 'ok', delayMs: Math.floor(Math.random() * 40) });
    await inParallel(cases, 20, async ({ scenario, arrival }, n) => {
      const events = stripeEvents(scenario, chargeIds[n]!, BASE);
      for (const index of arrival) assert.equal((await postStripe(service.baseUrl, events[index]!.body, SECRET)).status, 200);
    });
    const eventIds = cases.flatMap(({ scenario }, n) => stripeEvents(scenario, chargeIds[n]!, BASE).map((e) => e.eventId));
    await waitUntilSettled(database.sql, eventIds, 120_000);
    const payments = await waitFor(
      async () => {
        const rows = await paymentsOf(database.sql, chargeIds);
        return rows.length === chargeIds.length && allDelivered(consumer, rows) ? rows : undefined;
      },
      { message: 'every payment delivered up to its last event', timeoutMs: 120_000, intervalMs: 200 },
    );
    assert.equal(consumer.unverified, 0, 'every request verified with standardwebhooks');
    let repeats = 0;
    for (const payment of payments) {
      const context = `(seed ${seed}) ${payment.chargeId}`;
      const { applied, repeats: repeated, inOrder } = applyBySequence(consumer.acceptedFor(payment.chargeId));
      repeats += repeated;
      assert.ok(inOrder, `${context}: sequences ${applied.map((e) => e.sequence).join(',')}`);
      assert.equal(applied.length, payment.eventSequence, `${context}: one event per change of the payment`);
      assert.deepEqual(
        applied.map((e) => e.webhookId),
        await eventIdsOf(database.sql, payment.id),
        `${context}: webhook-id is the outbox event id`,
      );
      assert.equal(applied.at(-1)!.status, payment.status, `${context}: the last event is the payment's status`);
      assert.ok(
        applied.every((e) => e.type === `payment.${e.status}`),
        context,
      );
    }
    // Nothing failed or crashed here: a repeat would mean a lane ran twice at once.
    assert.equal(repeats, 0, 'no event delivered twice');
  });
});
