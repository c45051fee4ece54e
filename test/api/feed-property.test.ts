/**
 * Through the real service: random charge histories posted in random order with duplicates, all
 * at once, processed by the real workers, read back through the feed while they are processed.
 * Per payment the feed gives sequence 1..n in order without a gap, each event tells something new,
 * and its last event is the payments row (its status also the independent reference model's).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { PaymentEventBody } from '../../src/delivery/payment-event-body.ts';
import { referenceOutcome, scenarioWithArrivalArb, stripeEvents } from '../domain/charge-scenarios.ts';
import { SECRET, paymentOf, transitionsOf, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { API_TOKEN, readFeedPage } from './feed-client.ts';

const BASE = 1_760_000_000;
const HISTORIES = 100;
const database = useTestDatabase();
let service: TestService;

setup(async () => {
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_API_TOKEN: API_TOKEN } });
});

describe('the feed through the real service', () => {
  test(`${HISTORIES} random charge histories, posted at once in random order with duplicates: per payment the feed gives 1..n in order, ending in the payment as its row has it`, async () => {
    const seed = Date.now() % 2_147_483_647;
    const cases = fc.sample(scenarioWithArrivalArb, { numRuns: HISTORIES, seed });
    const chargeIds = cases.map((_, n) => `ch_feed_prop_${n}`);
    const feed: PaymentEventBody[] = [];
    let cursor = '';
    let pageNumber = 0;
    const readPage = async () => {
      pageNumber += 1;
      // Page sizes from 1 to 40, so page boundaries fall everywhere.
      const page = await readFeedPage(service.baseUrl, cursor, 1 + ((pageNumber * 17) % 40));
      feed.push(...page.events);
      cursor = page.next_cursor;
      return page.events.length;
    };
    let posting = true;
    const readingMeanwhile = (async () => {
      while (posting) if ((await readPage()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    })();
    await Promise.all(
      cases.map(async ({ scenario, arrival }, n) => {
        const events = stripeEvents(scenario, chargeIds[n]!, BASE);
        for (const index of arrival) assert.equal((await postStripe(service.baseUrl, events[index]!.body, SECRET)).status, 200);
      }),
    );
    for (const [n, { scenario }] of cases.entries()) {
      await waitUntilSettled(
        database.sql,
        stripeEvents(scenario, chargeIds[n]!, BASE).map((e) => e.eventId),
        60_000,
      );
    }
    posting = false;
    await readingMeanwhile;
    const [{ count }] = (await database.sql`select count(*)::int as count from payment_events`) as unknown as [{ count: number }];
    await waitFor(
      async () => {
        while ((await readPage()) > 0);
        return feed.length >= count;
      },
      { message: 'the feed to reach every event' },
    );

    const context = (n: number) => `(fc.sample seed ${seed}, case ${n}) ${JSON.stringify(cases[n]!.scenario)}`;
    assert.equal(new Set(feed.map((e) => e.id)).size, feed.length, 'an event came twice');
    for (const [n, chargeId] of chargeIds.entries()) {
      const mine = feed.filter((e) => e.payment.charge_id === chargeId);
      assert.deepEqual(
        mine.map((e) => e.sequence),
        mine.map((_, i) => i + 1),
        `${context(n)}: sequences in feed order`,
      );
      const payment = await paymentOf(database.sql, chargeId);
      const last = mine.at(-1)!;
      // The whole payment, amounts and inquiry too: a further partial refund (or a refund amount
      // learnt while disputed, an inquiry opened) is an event of its own, so the last one the
      // application got is the row.
      assert.deepEqual(
        {
          status: last.payment.status,
          amount: last.payment.amount,
          amountRefunded: last.payment.amount_refunded,
          currency: last.payment.currency,
          inquiryOpen: last.payment.inquiry_open,
        },
        {
          status: payment?.status,
          amount: payment?.amount,
          amountRefunded: payment?.amountRefunded,
          currency: payment?.currency,
          inquiryOpen: payment?.inquiryOpen,
        },
        `${context(n)}: the last event is not the payment row`,
      );
      assert.equal(last.payment.status, referenceOutcome(cases[n]!.scenario).status, context(n));
      const statusChanges = mine.filter((e) => e.payment.previous_status !== e.payment.status);
      assert.equal(statusChanges.length, (await transitionsOf(database.sql, chargeId)).length, `${context(n)}: one status-changing event per transition`);
      assert.ok(
        mine.every((e, i) => e.payment.previous_status === (i === 0 ? null : mine[i - 1]!.payment.status)),
        `${context(n)}: previous_status chain`,
      );
      const news = (e: PaymentEventBody) => JSON.stringify(e.payment);
      assert.ok(
        mine.every((e, i) => i === 0 || news(e) !== news(mine[i - 1]!)),
        `${context(n)}: an event that tells nothing new`,
      );
    }
  });
});
