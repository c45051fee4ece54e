/**
 * A payment whose amounts move while its status stays (a second partial refund) through the real
 * service: signed Stripe webhooks over HTTP in, the feed and two real destinations out (README,
 * Consuming payment events). The application must hear of every refund, not only of the first.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { API_TOKEN, drainFeed } from '../api/feed-client.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const database = useTestDatabase();
let everything: Consumer;
let refundsOnly: Consumer;
let service: TestService;
const configPath = '/virtual/inbox.json';

setup(async () => {
  database.onTeardown(() => everything?.close());
  database.onTeardown(() => refundsOnly?.close());
  const [appSecret, refundsSecret] = [newDestinationSecret(), newDestinationSecret()];
  everything = await startConsumer(appSecret);
  refundsOnly = await startConsumer(refundsSecret);
  service = await startTestService({
    database,
    env: {
      WEBHOOK_SECRET_STRIPE: SECRET,
      INBOX_API_TOKEN: API_TOKEN,
      INBOX_CONFIG: configPath,
      DESTINATION_URL_APP: everything.url,
      DESTINATION_SECRET_APP: appSecret,
      DESTINATION_URL_REFUNDS: refundsOnly.url,
      DESTINATION_SECRET_REFUNDS: refundsSecret,
    },
    files: { [configPath]: JSON.stringify({ destinations: { refunds: { kinds: ['payment.partially_refunded'] } } }) },
  });
});

async function post(body: string): Promise<void> {
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
}

describe('amounts that move while the status stays', () => {
  test('two partial refunds of one charge (500, then 1,200 of 2,000): two payment.partially_refunded events, in the feed and pushed, and a repeat of the second writes none', async () => {
    const chargeId = 'ch_two_refunds';
    const created = 1_760_000_000;
    await post(chargeEvent({ id: 'evt_amounts_paid', type: 'charge.succeeded', chargeId, created }));
    await post(chargeEvent({ id: 'evt_amounts_refund_1', type: 'charge.refunded', chargeId, created: created + 60, amountRefunded: 500 }));
    await post(chargeEvent({ id: 'evt_amounts_refund_2', type: 'charge.refunded', chargeId, created: created + 120, amountRefunded: 1200 }));
    await waitUntilSettled(database.sql, ['evt_amounts_paid', 'evt_amounts_refund_1', 'evt_amounts_refund_2']);
    // The same refund told again under another event id (a second notice of it), once the first
    // is applied (else either could be the one that moved the amount): nothing moves.
    await post(chargeEvent({ id: 'evt_amounts_refund_2_again', type: 'charge.refunded', chargeId, created: created + 180, amountRefunded: 1200 }));
    const settled = await waitUntilSettled(database.sql, ['evt_amounts_paid', 'evt_amounts_refund_1', 'evt_amounts_refund_2', 'evt_amounts_refund_2_again']);
    assert.deepEqual(
      settled.map((r) => [r.eventId, r.status]),
      [
        ['evt_amounts_paid', 'processed'],
        ['evt_amounts_refund_1', 'processed'],
        ['evt_amounts_refund_2', 'processed'],
        ['evt_amounts_refund_2_again', 'ignored'],
      ],
    );

    const expected = [
      { sequence: 1, type: 'payment.paid', previous_status: null, status: 'paid', amount_refunded: 0, cause: 'evt_amounts_paid' },
      {
        sequence: 2,
        type: 'payment.partially_refunded',
        previous_status: 'paid',
        status: 'partially_refunded',
        amount_refunded: 500,
        cause: 'evt_amounts_refund_1',
      },
      {
        sequence: 3,
        type: 'payment.partially_refunded',
        previous_status: 'partially_refunded',
        status: 'partially_refunded',
        amount_refunded: 1200,
        cause: 'evt_amounts_refund_2',
      },
    ];
    const payments = await paymentsOf(database.sql, [chargeId]);
    // The feed holds back rows below the horizon for a moment: wait for as many as the outbox has.
    const { events: feed } = await waitFor(
      async () => {
        const drained = await drainFeed(service.baseUrl, '', 100);
        return drained.events.length >= payments[0]!.eventSequence ? drained : undefined;
      },
      { message: 'the feed to show every event of the payment' },
    );
    assert.deepEqual(
      feed.map((e) => ({
        sequence: e.sequence,
        type: e.type,
        previous_status: e.payment.previous_status,
        status: e.payment.status,
        amount_refunded: e.payment.amount_refunded,
        cause: e.cause.event_id,
      })),
      expected,
    );
    const lookup = (await (
      await fetch(`${service.baseUrl}/api/v1/payments/stripe/${chargeId}`, { headers: { authorization: `Bearer ${API_TOKEN}` } })
    ).json()) as {
      payment: { amount_refunded: number; event_sequence: number };
    };
    assert.deepEqual([lookup.payment.amount_refunded, lookup.payment.event_sequence], [1200, 3], 'the payment and its last event agree');

    await waitFor(() => allDelivered(everything, payments), { message: 'every event pushed to the destination without a filter' });
    const pushed = applyBySequence(everything.acceptedFor(chargeId)).applied;
    assert.deepEqual(
      pushed.map((e) => [e.sequence, e.type, e.previousStatus, e.amountRefunded]),
      expected.map((e) => [e.sequence, e.type, e.previous_status, e.amount_refunded]),
    );
    // A consumer tells the second refund from a resend of the first by its webhook-id and sequence.
    assert.equal(new Set(pushed.map((e) => e.webhookId)).size, 3);

    await waitFor(() => refundsOnly.acceptedFor(chargeId).length >= 2, {
      message: 'both refunds pushed to the destination filtering payment.partially_refunded',
    });
    assert.deepEqual(
      applyBySequence(refundsOnly.acceptedFor(chargeId)).applied.map((e) => [e.sequence, e.type, e.amountRefunded]),
      [
        [2, 'payment.partially_refunded', 500],
        [3, 'payment.partially_refunded', 1200],
      ],
    );
  });
});
