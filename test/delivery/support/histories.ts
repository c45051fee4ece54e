import assert from 'node:assert/strict';
import fc from 'fast-check';
import type postgres from 'postgres';
import { scenarioWithArrivalArb, stripeEvents } from '../../domain/charge-scenarios.ts';
import { postStripe } from '../../support/stripe.ts';
import type { BrokerConsumer } from './broker-consumer.ts';
import { applyBySequence } from './consumer.ts';
import { type PaymentRow, eventIdsOf } from './lanes.ts';

const BASE_SECONDS = 1_760_000_000;

export interface PostedHistories {
  chargeIds: string[];
  /** Every gateway event id posted (each at least once). */
  eventIds: string[];
}

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(items: readonly T[], width: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

/**
 * `count` random charge histories as real Stripe webhooks (signed by the official SDK), each in a
 * random arrival order with some events sent twice, 20 at a time; every one must get 200.
 */
export async function postHistories(baseUrl: string, secret: string, options: { count: number; seed: number; prefix: string }): Promise<PostedHistories> {
  const cases = fc.sample(scenarioWithArrivalArb, { numRuns: options.count, seed: options.seed });
  const chargeIds = cases.map((_, n) => `ch_${options.prefix}_${n}`);
  await inParallel(cases, 20, async ({ scenario, arrival }, n) => {
    const events = stripeEvents(scenario, chargeIds[n]!, BASE_SECONDS);
    for (const index of arrival) assert.equal((await postStripe(baseUrl, events[index]!.body, secret)).status, 200);
  });
  const eventIds = cases.flatMap(({ scenario }, n) => stripeEvents(scenario, chargeIds[n]!, BASE_SECONDS).map((e) => e.eventId));
  return { chargeIds, eventIds };
}

/** Every listed payment's last event taken by the consumer. */
export function brokerHasAll(consumer: BrokerConsumer, payments: readonly PaymentRow[]): boolean {
  return payments.every((p) => p.eventSequence > 0 && consumer.acceptedFor(p.chargeId).some((e) => e.sequence === p.eventSequence));
}

/**
 * What a consumer that dedupes by id and applies by sequence makes of each payment's messages:
 * 1..n in order with no gap, the outbox's ids, ending at the payment's status, each routed by its
 * payment. Returns the repeats it dropped (same id again: at least once).
 */
export async function assertEveryPaymentInOrder(
  sql: postgres.Sql,
  consumer: BrokerConsumer,
  payments: readonly PaymentRow[],
  routeOf: (chargeId: string) => string,
  context: string,
): Promise<number> {
  assert.equal(consumer.unverified, 0, 'every message verified with standardwebhooks');
  assert.deepEqual(consumer.misaddressed, [], 'every broker message id is its event id');
  let repeats = 0;
  for (const payment of payments) {
    const label = `${context} ${payment.chargeId}`;
    const { applied, repeats: repeated, inOrder } = applyBySequence(consumer.acceptedFor(payment.chargeId));
    repeats += repeated;
    assert.ok(inOrder, `${label}: sequences ${applied.map((e) => e.sequence).join(',')}`);
    assert.equal(applied.length, payment.eventSequence, `${label}: one event per change of the payment, no gap`);
    assert.deepEqual(
      applied.map((e) => e.webhookId),
      await eventIdsOf(sql, payment.id),
      `${label}: ids are the outbox event ids`,
    );
    assert.equal(applied.at(-1)!.status, payment.status, `${label}: the last event is the payment's status`);
    for (const event of applied) assert.equal(consumer.routes.get(event.webhookId), routeOf(payment.chargeId), `${label}: routed by its payment`);
  }
  return repeats;
}
