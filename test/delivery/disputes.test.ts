/**
 * Disputes as the application hears of them (docs/disputes.md), through the real service: Stripe
 * events built from Stripe's own fixtures and signed by the official SDK, the feed, and a real
 * destination verifying every push with `standardwebhooks`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Stripe from 'stripe';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { API_TOKEN, drainFeed } from '../api/feed-client.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { fixtureCharge, fixtureDispute, fixtureEventBody } from '../support/stripe-objects.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const database = useTestDatabase();
let app: Consumer;
let service: TestService;

setup(async () => {
  database.onTeardown(() => app?.close());
  const secret = newDestinationSecret();
  app = await startConsumer(secret);
  service = await startTestService({
    database,
    env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_API_TOKEN: API_TOKEN, DESTINATION_URL_APP: app.url, DESTINATION_SECRET_APP: secret },
  });
});

const BASE = Math.floor(Date.now() / 1000) - 60 * 86_400;
const DAY = 86_400;
const AMOUNT = 2000;

const charge = (id: string, fields: Partial<Stripe.Charge> = {}) =>
  fixtureCharge({
    id,
    payment_intent: null,
    amount: AMOUNT,
    amount_captured: AMOUNT,
    amount_refunded: 0,
    captured: true,
    refunded: false,
    paid: true,
    status: 'succeeded',
    currency: 'brl',
    ...fields,
  });
const dispute = (chargeId: string, status: Stripe.Dispute.Status) =>
  fixtureDispute({ id: `dp_${chargeId}`, charge: chargeId, payment_intent: null, amount: AMOUNT, currency: 'brl', status });

/** Posts each event and waits for it to be processed before the next: the application's events then come in this order. */
async function postInOrder(events: readonly { id: string; type: Stripe.Event.Type; at: number; object: Stripe.Charge | Stripe.Dispute }[]): Promise<void> {
  for (const event of events) {
    const response = await postStripe(service.baseUrl, fixtureEventBody(event.id, event.type, BASE + event.at, event.object), SECRET);
    assert.equal(response.status, 200);
    await waitUntilSettled(database.sql, [event.id]);
  }
}

interface Told {
  sequence: number;
  type: string;
  previous_status: string | null;
  amount_refunded: number;
  inquiry_open: boolean;
}

const told = (sequence: number, status: string, previous: string | null, amountRefunded: number, inquiryOpen: boolean): Told => ({
  sequence,
  type: `payment.${status}`,
  previous_status: previous,
  amount_refunded: amountRefunded,
  inquiry_open: inquiryOpen,
});

/** What the feed and the destination told of one payment: the same, in sequence order. */
async function toldOf(chargeId: string): Promise<Told[]> {
  const [payment] = await paymentsOf(database.sql, [chargeId]);
  const { events } = await waitFor(
    async () => {
      const drained = await drainFeed(service.baseUrl, '', 100);
      return drained.events.filter((e) => e.payment.charge_id === chargeId).length >= payment!.eventSequence ? drained : undefined;
    },
    { message: `the feed to show every event of ${chargeId}` },
  );
  const feed = events
    .filter((e) => e.payment.charge_id === chargeId)
    .map((e) => ({
      sequence: e.sequence,
      type: e.type,
      previous_status: e.payment.previous_status,
      amount_refunded: e.payment.amount_refunded,
      inquiry_open: e.payment.inquiry_open,
    }));
  await waitFor(() => allDelivered(app, [payment!]), { message: `every event of ${chargeId} pushed` });
  const pushed = applyBySequence(app.acceptedFor(chargeId)).applied.map((e) => ({
    sequence: e.sequence,
    type: e.type,
    previous_status: e.previousStatus,
    amount_refunded: e.amountRefunded,
    inquiry_open: e.inquiryOpen,
  }));
  assert.deepEqual(pushed, feed, 'the destination was told what the feed tells');
  assert.equal(app.unverified, 0);
  return feed;
}

describe('disputes as the application hears of them', () => {
  test("an inquiry (Stripe's fixture dispute, warning_needs_response) opens and closes on a paid payment: payment.paid each time, inquiry_open true then false", async () => {
    const id = 'ch_inquiry_e2e';
    await postInOrder([
      { id: 'evt_inq_paid', type: 'charge.succeeded', at: 0, object: charge(id) },
      { id: 'evt_inq_opened', type: 'charge.dispute.created', at: 3 * DAY, object: dispute(id, 'warning_needs_response') },
      { id: 'evt_inq_closed', type: 'charge.dispute.closed', at: 20 * DAY, object: dispute(id, 'warning_closed') },
    ]);
    assert.deepEqual(await toldOf(id), [told(1, 'paid', null, 0, false), told(2, 'paid', 'paid', 0, true), told(3, 'paid', 'paid', 0, false)]);
    const lookup = (await (await fetch(`${service.baseUrl}/api/v1/payments/stripe/${id}`, { headers: { authorization: `Bearer ${API_TOKEN}` } })).json()) as {
      payment: { status: string; inquiry_open: boolean };
    };
    assert.deepEqual([lookup.payment.status, lookup.payment.inquiry_open], ['paid', false]);
  });

  test('a dispute won on a partially refunded payment returns it to partially refunded, its refund kept; never payment.paid', async () => {
    const id = 'ch_won_partial_e2e';
    await postInOrder([
      { id: 'evt_won_paid', type: 'charge.succeeded', at: 0, object: charge(id) },
      { id: 'evt_won_refund', type: 'charge.refunded', at: DAY, object: charge(id, { amount_refunded: 200 }) },
      { id: 'evt_won_created', type: 'charge.dispute.created', at: 5 * DAY, object: dispute(id, 'needs_response') },
      { id: 'evt_won_closed', type: 'charge.dispute.closed', at: 40 * DAY, object: dispute(id, 'won') },
    ]);
    assert.deepEqual(await toldOf(id), [
      told(1, 'paid', null, 0, false),
      told(2, 'partially_refunded', 'paid', 200, false),
      told(3, 'disputed', 'partially_refunded', 200, false),
      told(4, 'partially_refunded', 'disputed', 200, false),
    ]);
  });

  test('an inquiry escalated in place (funds_withdrawn, needs_response) and lost after a partial refund: charged back, the refund kept', async () => {
    const id = 'ch_escalated_e2e';
    await postInOrder([
      { id: 'evt_esc_paid', type: 'charge.succeeded', at: 0, object: charge(id) },
      { id: 'evt_esc_refund', type: 'charge.refunded', at: DAY, object: charge(id, { amount_refunded: 150 }) },
      { id: 'evt_esc_inquiry', type: 'charge.dispute.created', at: 3 * DAY, object: dispute(id, 'warning_needs_response') },
      { id: 'evt_esc_withdrawn', type: 'charge.dispute.funds_withdrawn', at: 9 * DAY, object: dispute(id, 'needs_response') },
      { id: 'evt_esc_lost', type: 'charge.dispute.closed', at: 50 * DAY, object: dispute(id, 'lost') },
    ]);
    assert.deepEqual(await toldOf(id), [
      told(1, 'paid', null, 0, false),
      told(2, 'partially_refunded', 'paid', 150, false),
      told(3, 'partially_refunded', 'partially_refunded', 150, true),
      told(4, 'disputed', 'partially_refunded', 150, false),
      told(5, 'charged_back', 'disputed', 150, false),
    ]);
  });
});
