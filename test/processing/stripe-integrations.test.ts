import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Stripe from 'stripe';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { postStripe } from '../support/stripe.ts';
import { fixtureCharge, fixtureCheckoutSession, fixtureDispute, fixtureEventBody, fixturePaymentIntent } from '../support/stripe-objects.ts';
import { SECRET, inboxRows, paymentOf, transitionsOf, waitUntilSettled } from './harness.ts';

// One Stripe account seen by four integrations, each its own provider (one webhook endpoint each):
// subscribed to charge.* only, to payment_intent.* only, to both, or to checkout.session.* only.
// The same money movements are posted to each (its own families only, signed by the official
// SDK's test signer), in reverse order, and every integration must end with the same payments.
const INTEGRATIONS = {
  'stripe-charges': ['charge'],
  'stripe-intents': ['payment_intent'],
  'stripe-both': ['charge', 'payment_intent'],
  'stripe-checkout': ['checkout'],
} as const;
type Integration = keyof typeof INTEGRATIONS;
type Family = 'charge' | 'payment_intent' | 'checkout';

const database = useTestDatabase();
const service = useService({
  database,
  env: {
    INBOX_CONFIG: '/inbox.json',
    ...Object.fromEntries(Object.keys(INTEGRATIONS).map((name) => [`WEBHOOK_SECRET_${name.toUpperCase().replace('-', '_')}`, SECRET])),
    WEBHOOK_SECRET_STRIPE: SECRET,
  },
  files: {
    '/inbox.json': JSON.stringify({ providers: Object.fromEntries(['stripe', ...Object.keys(INTEGRATIONS)].map((name) => [name, { driver: 'stripe' }])) }),
  },
});

const BASE = Math.floor(Date.now() / 1000) - 30 * 86_400;
const AMOUNT = 4990;
const DAY = 86_400;

interface Step {
  atSecond: number;
  type: Stripe.Event.Type;
  object: Stripe.Charge | Stripe.PaymentIntent | Stripe.Checkout.Session | Stripe.Dispute;
}

function familyOf(type: string): Family {
  if (type.startsWith('charge.')) return 'charge';
  return type.startsWith('payment_intent.') ? 'payment_intent' : 'checkout';
}

/** The money movement of one PaymentIntent, as the objects of each family, built from Stripe's fixtures. */
function movement(pi: string) {
  const charge = (id: string, fields: Partial<Stripe.Charge>) =>
    fixtureCharge({
      id,
      payment_intent: pi,
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
  const intent = (status: Stripe.PaymentIntent.Status, latestCharge: string | null, fields: Partial<Stripe.PaymentIntent> = {}) =>
    fixturePaymentIntent({
      id: pi,
      amount: AMOUNT,
      currency: 'brl',
      status,
      latest_charge: latestCharge,
      capture_method: 'automatic_async',
      canceled_at: null,
      last_payment_error: null,
      ...fields,
    });
  const session = (paymentStatus: Stripe.Checkout.Session.PaymentStatus, status: Stripe.Checkout.Session.Status) =>
    fixtureCheckoutSession({
      id: `cs_test_${pi}`,
      mode: 'payment',
      payment_intent: pi,
      amount_subtotal: AMOUNT,
      amount_total: AMOUNT,
      currency: 'brl',
      payment_status: paymentStatus,
      status,
    });
  return { charge, intent, session, ch: (n: number) => `ch_${pi.slice(3)}_${n}` };
}

interface History {
  name: string;
  /** The payment key: the PaymentIntent. */
  pi: string;
  steps: Step[];
  /** The integrations that can see how this movement ends (refunds are charge.* only, captures are not in checkout.session.*). */
  comparable: readonly Integration[];
  /** What every comparable integration must end with; null: no payment at all. */
  expected: { status: string; amount: number; amountRefunded: number; currency: string } | null;
}

const paid = (amountRefunded = 0, status = 'paid') => ({ status, amount: AMOUNT, amountRefunded, currency: 'BRL' });
const everyIntegration = Object.keys(INTEGRATIONS) as Integration[];
const withoutCheckout: Integration[] = ['stripe-charges', 'stripe-intents', 'stripe-both'];

function histories(): History[] {
  const card = movement('pi_card');
  const capture = movement('pi_capture');
  const lapse = movement('pi_lapse');
  const retry = movement('pi_retry');
  const abandon = movement('pi_abandon');
  const debit = movement('pi_debit');
  const debitFail = movement('pi_debit_fail');
  const refund = movement('pi_refund');
  const won = movement('pi_won');
  const inquiry = movement('pi_inquiry');
  const unattempted = movement('pi_unattempted');
  const dispute = (pi: string, charge: string, status: Stripe.Dispute.Status) =>
    fixtureDispute({ id: `dp_${pi}`, charge, payment_intent: pi, amount: AMOUNT, currency: 'brl', status });
  return [
    {
      name: 'a card paid at once',
      pi: 'pi_card',
      steps: [
        { atSecond: 0, type: 'charge.succeeded', object: card.charge(card.ch(1), {}) },
        { atSecond: 0, type: 'payment_intent.succeeded', object: card.intent('succeeded', card.ch(1), { amount_received: AMOUNT }) },
        { atSecond: 1, type: 'checkout.session.completed', object: card.session('paid', 'complete') },
      ],
      comparable: everyIntegration,
      expected: paid(),
    },
    {
      name: 'manual capture: authorized, captured an hour later',
      pi: 'pi_capture',
      steps: [
        { atSecond: 0, type: 'charge.succeeded', object: capture.charge(capture.ch(1), { captured: false, amount_captured: 0 }) },
        {
          atSecond: 0,
          type: 'payment_intent.amount_capturable_updated',
          object: capture.intent('requires_capture', capture.ch(1), { capture_method: 'manual', amount_capturable: AMOUNT }),
        },
        { atSecond: 3600, type: 'charge.captured', object: capture.charge(capture.ch(1), {}) },
        {
          atSecond: 3600,
          type: 'payment_intent.succeeded',
          object: capture.intent('succeeded', capture.ch(1), { capture_method: 'manual', amount_received: AMOUNT }),
        },
      ],
      comparable: withoutCheckout,
      expected: paid(),
    },
    {
      name: 'manual capture: the authorization lapses after 7 days (never paid)',
      pi: 'pi_lapse',
      steps: [
        { atSecond: 0, type: 'charge.succeeded', object: lapse.charge(lapse.ch(1), { captured: false, amount_captured: 0 }) },
        {
          atSecond: 0,
          type: 'payment_intent.amount_capturable_updated',
          object: lapse.intent('requires_capture', lapse.ch(1), { capture_method: 'manual', amount_capturable: AMOUNT }),
        },
        // Stripe marks a lapsed authorization refunded in full: nothing was taken all the same.
        {
          atSecond: 7 * DAY,
          type: 'charge.expired',
          object: lapse.charge(lapse.ch(1), { captured: false, amount_captured: 0, refunded: true, amount_refunded: AMOUNT }),
        },
        {
          atSecond: 7 * DAY,
          type: 'payment_intent.canceled',
          object: lapse.intent('canceled', lapse.ch(1), { capture_method: 'manual', cancellation_reason: 'automatic', canceled_at: BASE + 7 * DAY }),
        },
      ],
      comparable: withoutCheckout,
      expected: paid(0, 'canceled'),
    },
    {
      name: 'a declined card, then a second card that pays (two charges, one payment)',
      pi: 'pi_retry',
      steps: [
        {
          atSecond: 0,
          type: 'charge.failed',
          object: retry.charge(retry.ch(1), { status: 'failed', paid: false, captured: false, amount_captured: 0, failure_code: 'card_declined' }),
        },
        { atSecond: 0, type: 'payment_intent.payment_failed', object: retry.intent('requires_payment_method', retry.ch(1)) },
        { atSecond: 60, type: 'charge.succeeded', object: retry.charge(retry.ch(2), {}) },
        { atSecond: 60, type: 'payment_intent.succeeded', object: retry.intent('succeeded', retry.ch(2), { amount_received: AMOUNT }) },
        { atSecond: 61, type: 'checkout.session.completed', object: retry.session('paid', 'complete') },
      ],
      comparable: everyIntegration,
      expected: paid(),
    },
    {
      name: 'a declined card, then the PaymentIntent is canceled: failed, in every integration that saw the charge',
      pi: 'pi_abandon',
      steps: [
        {
          atSecond: 0,
          type: 'charge.failed',
          object: abandon.charge(abandon.ch(1), { status: 'failed', paid: false, captured: false, amount_captured: 0, failure_code: 'card_declined' }),
        },
        { atSecond: 0, type: 'payment_intent.payment_failed', object: abandon.intent('requires_payment_method', abandon.ch(1)) },
        {
          atSecond: 3600,
          type: 'payment_intent.canceled',
          object: abandon.intent('canceled', abandon.ch(1), { cancellation_reason: 'abandoned', canceled_at: BASE + 3600 }),
        },
      ],
      comparable: withoutCheckout,
      expected: paid(0, 'failed'),
    },
    {
      name: 'a bank debit: completed unpaid (pending), settled two days later',
      pi: 'pi_debit',
      steps: [
        { atSecond: 0, type: 'charge.pending', object: debit.charge(debit.ch(1), { status: 'pending', paid: false }) },
        { atSecond: 0, type: 'payment_intent.processing', object: debit.intent('processing', debit.ch(1)) },
        { atSecond: 0, type: 'checkout.session.completed', object: debit.session('unpaid', 'complete') },
        { atSecond: 2 * DAY, type: 'charge.succeeded', object: debit.charge(debit.ch(1), {}) },
        { atSecond: 2 * DAY, type: 'payment_intent.succeeded', object: debit.intent('succeeded', debit.ch(1), { amount_received: AMOUNT }) },
        { atSecond: 2 * DAY, type: 'checkout.session.async_payment_succeeded', object: debit.session('paid', 'complete') },
      ],
      comparable: everyIntegration,
      expected: paid(),
    },
    {
      name: 'a bank debit that fails',
      pi: 'pi_debit_fail',
      steps: [
        { atSecond: 0, type: 'charge.pending', object: debitFail.charge(debitFail.ch(1), { status: 'pending', paid: false }) },
        { atSecond: 0, type: 'payment_intent.processing', object: debitFail.intent('processing', debitFail.ch(1)) },
        { atSecond: 0, type: 'checkout.session.completed', object: debitFail.session('unpaid', 'complete') },
        {
          atSecond: 2 * DAY,
          type: 'charge.failed',
          object: debitFail.charge(debitFail.ch(1), { status: 'failed', paid: false, captured: false, amount_captured: 0 }),
        },
        { atSecond: 2 * DAY, type: 'payment_intent.payment_failed', object: debitFail.intent('requires_payment_method', debitFail.ch(1)) },
        { atSecond: 2 * DAY, type: 'checkout.session.async_payment_failed', object: debitFail.session('unpaid', 'complete') },
      ],
      comparable: everyIntegration,
      expected: paid(0, 'failed'),
    },
    {
      name: 'paid, partly refunded, disputed and lost (refunds and disputes are charge.* events only)',
      pi: 'pi_refund',
      steps: [
        { atSecond: 0, type: 'charge.succeeded', object: refund.charge(refund.ch(1), {}) },
        { atSecond: 0, type: 'payment_intent.succeeded', object: refund.intent('succeeded', refund.ch(1), { amount_received: AMOUNT }) },
        { atSecond: DAY, type: 'charge.refunded', object: refund.charge(refund.ch(1), { amount_refunded: 1000 }) },
        {
          atSecond: 3 * DAY,
          type: 'charge.dispute.created',
          object: fixtureDispute({
            id: 'dp_refund',
            charge: refund.ch(1),
            payment_intent: 'pi_refund',
            amount: AMOUNT,
            currency: 'brl',
            status: 'needs_response',
          }),
        },
        {
          atSecond: 40 * DAY,
          type: 'charge.dispute.closed',
          object: fixtureDispute({ id: 'dp_refund', charge: refund.ch(1), payment_intent: 'pi_refund', amount: AMOUNT, currency: 'brl', status: 'lost' }),
        },
      ],
      comparable: ['stripe-charges', 'stripe-both'],
      expected: { ...paid(1000, 'charged_back') },
    },
    {
      name: 'paid, partly refunded, disputed and won: partially refunded again, the refund kept (docs/disputes.md)',
      pi: 'pi_won',
      steps: [
        { atSecond: 0, type: 'charge.succeeded', object: won.charge(won.ch(1), {}) },
        { atSecond: 0, type: 'payment_intent.succeeded', object: won.intent('succeeded', won.ch(1), { amount_received: AMOUNT }) },
        { atSecond: DAY, type: 'charge.refunded', object: won.charge(won.ch(1), { amount_refunded: 200 }) },
        { atSecond: 3 * DAY, type: 'charge.dispute.created', object: dispute('pi_won', won.ch(1), 'needs_response') },
        { atSecond: 3 * DAY, type: 'charge.dispute.funds_withdrawn', object: dispute('pi_won', won.ch(1), 'needs_response') },
        { atSecond: 40 * DAY, type: 'charge.dispute.closed', object: dispute('pi_won', won.ch(1), 'won') },
        { atSecond: 40 * DAY, type: 'charge.dispute.funds_reinstated', object: dispute('pi_won', won.ch(1), 'won') },
      ],
      comparable: ['stripe-charges', 'stripe-both'],
      expected: { ...paid(200, 'partially_refunded') },
    },
    {
      name: "an inquiry (Stripe's fixture dispute) opened and closed moved no money: paid",
      pi: 'pi_inquiry',
      steps: [
        { atSecond: 0, type: 'charge.succeeded', object: inquiry.charge(inquiry.ch(1), {}) },
        { atSecond: 0, type: 'payment_intent.succeeded', object: inquiry.intent('succeeded', inquiry.ch(1), { amount_received: AMOUNT }) },
        { atSecond: 2 * DAY, type: 'charge.dispute.created', object: dispute('pi_inquiry', inquiry.ch(1), 'warning_needs_response') },
        { atSecond: 9 * DAY, type: 'charge.dispute.closed', object: dispute('pi_inquiry', inquiry.ch(1), 'warning_closed') },
      ],
      comparable: ['stripe-charges', 'stripe-both'],
      expected: paid(),
    },
    {
      name: 'a PaymentIntent canceled before any attempt moved no money: no payment anywhere',
      pi: 'pi_unattempted',
      steps: [
        {
          atSecond: 0,
          type: 'payment_intent.canceled',
          object: unattempted.intent('canceled', null, { cancellation_reason: 'requested_by_customer', canceled_at: BASE }),
        },
      ],
      comparable: withoutCheckout,
      expected: null,
    },
  ];
}

const eventId = (history: History, index: number) => `evt_${history.pi}_${index}`;

function eventsFor(integration: Integration, history: History) {
  const families: readonly Family[] = INTEGRATIONS[integration];
  return history.steps
    .map((step, index) => ({
      id: eventId(history, index),
      body: fixtureEventBody(eventId(history, index), step.type, BASE + step.atSecond, step.object),
      family: familyOf(step.type),
    }))
    .filter((event) => families.includes(event.family));
}

async function send(provider: string, body: string): Promise<void> {
  const response = await postStripe(service.baseUrl, body, SECRET, { provider });
  assert.equal(response.status, 200, await response.clone().text());
}

function moneyOf(payment: Awaited<ReturnType<typeof paymentOf>>) {
  return payment && { status: payment.status, amount: payment.amount, amountRefunded: payment.amountRefunded, currency: payment.currency };
}

describe('Stripe: charge.*, payment_intent.* and checkout.session.* are one payment', () => {
  test('integrations subscribed to charge.* only, payment_intent.* only, both, or checkout.session.* end with the same payments', async () => {
    const all = histories();
    for (const history of all) {
      for (const integration of history.comparable) {
        // Newest first: the worst arrival order.
        for (const event of eventsFor(integration, history).reverse()) await send(integration, event.body);
      }
    }
    for (const history of all) {
      for (const integration of history.comparable) {
        const ids = eventsFor(integration, history).map((event) => event.id);
        if (ids.length > 0) await waitUntilSettled(database.sql, ids, 30_000, integration);
        assert.deepEqual(moneyOf(await paymentOf(database.sql, history.pi, integration)), history.expected ?? undefined, `${history.name} (${integration})`);
      }
    }
    // Each movement is ONE payment, keyed by its PaymentIntent: no row under a charge or session id.
    const others = await database.sql`select provider, gateway_charge_id from payments where provider like 'stripe-%' and gateway_charge_id not like 'pi\\_%'`;
    assert.deepEqual([...others], []);
  });

  test('a manual-capture charge then charge.expired ends canceled, never paid (charge.* only, newest first)', async () => {
    const lapse = movement('pi_lapse_only');
    const authorized = fixtureEventBody('evt_lapse_only_1', 'charge.succeeded', BASE, lapse.charge(lapse.ch(1), { captured: false, amount_captured: 0 }));
    const expired = fixtureEventBody(
      'evt_lapse_only_2',
      'charge.expired',
      BASE + 7 * DAY,
      lapse.charge(lapse.ch(1), { captured: false, amount_captured: 0, refunded: true, amount_refunded: AMOUNT }),
    );
    await send('stripe', expired);
    await send('stripe', authorized);
    await waitUntilSettled(database.sql, ['evt_lapse_only_1', 'evt_lapse_only_2']);
    assert.deepEqual(moneyOf(await paymentOf(database.sql, 'pi_lapse_only')), { status: 'canceled', amount: AMOUNT, amountRefunded: 0, currency: 'BRL' });
    assert.ok(!(await transitionsOf(database.sql, 'pi_lapse_only')).some((t) => t.to === 'paid'), 'never reported paid');
  });

  test('a charge without a PaymentIntent (Charges API) is keyed by its own id', async () => {
    const body = fixtureEventBody(
      'evt_legacy_api',
      'charge.succeeded',
      BASE,
      fixtureCharge({ id: 'ch_charges_api', payment_intent: null, amount: 1500, amount_captured: 1500, captured: true, currency: 'usd' }),
    );
    await send('stripe', body);
    await waitUntilSettled(database.sql, ['evt_legacy_api']);
    assert.deepEqual(moneyOf(await paymentOf(database.sql, 'ch_charges_api')), { status: 'paid', amount: 1500, amountRefunded: 0, currency: 'USD' });
  });
});

describe('upgrade: payments stored under their charge id before PaymentIntents were the key', () => {
  /** What the previous version left: the payment and its event, both under the charge id. */
  async function legacyPayment(chargeId: string, pi: string): Promise<number> {
    const body = fixtureEventBody(`evt_${chargeId}_old`, 'charge.succeeded', BASE, movement(pi).charge(chargeId, {}));
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, status, processed_at, attempts, fact)
      values ('stripe', ${`evt_${chargeId}_old`}, 'charge.succeeded', ${chargeId}, ${database.sql.json(JSON.parse(body))}, ${Buffer.from(body)},
              ${new Date(BASE * 1000)}, 'processed', now(), 1,
              ${database.sql.json({ chargeId, status: 'paid', occurredAt: new Date(BASE * 1000).toISOString(), amount: AMOUNT, amountRefunded: 0, currency: 'BRL' })})`;
    const [row] = await database.sql`
      insert into payments (provider, gateway_charge_id, status, amount, amount_refunded, currency, last_gateway_event_at, event_sequence)
      values ('stripe', ${chargeId}, 'paid', ${AMOUNT}, 0, 'BRL', ${new Date(BASE * 1000)}, 1) returning id`;
    return Number(row!.id);
  }

  test('a later event of that charge (now keyed by its PaymentIntent) updates the same row, under the key the application knows', async () => {
    const id = await legacyPayment('ch_upgraded', 'pi_upgraded');
    const refund = movement('pi_upgraded').charge('ch_upgraded', { amount_refunded: AMOUNT, refunded: true });
    await send('stripe', fixtureEventBody('evt_upgraded_refund', 'charge.refunded', BASE + DAY, refund));
    const [row] = await waitUntilSettled(database.sql, ['evt_upgraded_refund']);
    assert.equal(row!.status, 'processed');
    const payment = await paymentOf(database.sql, 'ch_upgraded');
    assert.deepEqual({ id: payment?.id, ...moneyOf(payment) }, { id, status: 'refunded', amount: AMOUNT, amountRefunded: AMOUNT, currency: 'BRL' });
    assert.equal(await paymentOf(database.sql, 'pi_upgraded'), undefined, 'not split into a second payment');
    const [outbound] = await database.sql`select sequence, gateway_charge_id, status from payment_events where payment_id = ${id}`;
    assert.deepEqual(
      { ...outbound },
      { sequence: 2, gateway_charge_id: 'ch_upgraded', status: 'refunded' },
      'the outbound sequence goes on under the same charge_id',
    );
  });

  test('the fold still sees the facts stored under the charge id: an old dispute is not lost to a later PaymentIntent event', async () => {
    await legacyPayment('ch_upgraded_dispute', 'pi_upgraded_dispute');
    const charge = 'ch_upgraded_dispute';
    const disputed = fixtureDispute({
      id: 'dp_upgraded',
      charge,
      payment_intent: 'pi_upgraded_dispute',
      amount: AMOUNT,
      currency: 'brl',
      status: 'needs_response',
    });
    const lost = fixtureDispute({ ...disputed, status: 'lost' });
    // The dispute opened before the upgrade and was processed under the charge id ...
    await send('stripe', fixtureEventBody('evt_upgraded_dispute', 'charge.dispute.created', BASE + DAY, disputed));
    await waitUntilSettled(database.sql, ['evt_upgraded_dispute']);
    await database.sql`update webhook_inbox set resource_id = ${charge}, fact = jsonb_set(fact, '{chargeId}', ${database.sql.json(charge)}) where event_id = 'evt_upgraded_dispute'`;
    // ... and is lost after it, the closing event keyed by the PaymentIntent.
    await send('stripe', fixtureEventBody('evt_upgraded_lost', 'charge.dispute.closed', BASE + 40 * DAY, lost));
    await waitUntilSettled(database.sql, ['evt_upgraded_lost']);
    assert.equal((await paymentOf(database.sql, charge))?.status, 'charged_back');
    assert.deepEqual(
      (await inboxRows(database.sql, ['evt_upgraded_lost'])).map((r) => r.status),
      ['processed'],
    );
  });
});
