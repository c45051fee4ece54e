import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type KnownFact, foldPaymentFacts } from '../../src/domain/payments/fold.ts';
import { toStripePaymentFact } from '../../src/gateways/stripe/webhook-driver.ts';
import { chargeEvent } from '../support/stripe.ts';
import { referenceOutcome, scenarioWithArrivalArb, stripeEvents } from './charge-scenarios.ts';

const BASE = 1_760_000_000;

function factOf(body: string, inboxId: number): KnownFact {
  const payload = JSON.parse(body);
  const object = payload.data.object;
  const fact = toStripePaymentFact({
    provider: 'stripe',
    eventId: payload.id,
    eventType: payload.type,
    resourceId: object.object === 'dispute' ? object.charge : object.id,
    occurredAt: new Date(payload.created * 1000),
    payload,
    payloadLossy: false,
  });
  assert.ok(fact, `${payload.type} maps to a payment fact`);
  return { inboxId, fact };
}

const pick = (state: { status: string; amountRefunded: number }) => [state.status, state.amountRefunded];

const event = (id: string, type: string, created: number, extra: { amountRefunded?: number; disputeStatus?: 'won' | 'lost' } = {}) =>
  chargeEvent({ id, type, chargeId: 'ch_fold', created: BASE + created, amount: 2000, ...extra });

describe('foldPaymentFacts', () => {
  test('the counterexample to per-event guards: paid(t1), dispute.created(t4), the partial refund of t3 arriving late, won(t6) ends partially refunded', () => {
    // Per-event guards ignore the refund as older than the dispute already applied, and the win then
    // returns to paid with nothing refunded; in true order the win returns to the partial refund.
    const paid = factOf(event('evt_paid', 'charge.succeeded', 1), 1);
    const created = factOf(event('evt_dispute', 'charge.dispute.created', 4), 2);
    const refund = factOf(event('evt_refund', 'charge.refunded', 3, { amountRefunded: 150 }), 3);
    const won = factOf(event('evt_won', 'charge.dispute.closed', 6, { disputeStatus: 'won' }), 4);
    assert.deepEqual(pick(foldPaymentFacts(null, [paid, created, won]).state!), ['paid', 0]);
    const all = foldPaymentFacts(null, [paid, created, won, refund]).state!;
    assert.deepEqual(pick(all), ['partially_refunded', 150]);
    assert.equal(all.lastGatewayEventAt!.getTime(), (BASE + 6) * 1000);
  });

  test('the fold names what it refused and from which status: a won dispute with no dispute known, until dispute.created arrives', () => {
    const paid = factOf(event('evt_paid', 'charge.succeeded', 2), 1);
    const won = factOf(event('evt_won', 'charge.dispute.closed', 5, { disputeStatus: 'won' }), 2);
    const created = factOf(event('evt_dispute', 'charge.dispute.created', 4), 3);
    const early = foldPaymentFacts(null, [paid, won]);
    assert.deepEqual(
      [...early.refused].map(([known, refusal]) => [known.inboxId, refusal.reason === 'transition' && refusal.from, refusal.after?.inboxId]),
      [[2, 'paid', 1]],
    );
    const complete = foldPaymentFacts(null, [paid, won, created]);
    assert.equal(complete.refused.size, 0);
    assert.deepEqual(
      complete.applied.map((k) => k.inboxId),
      [1, 3, 2],
    );
  });

  test('paid before pending: the late pending changes nothing', () => {
    const paid = factOf(event('evt_paid', 'charge.succeeded', 3), 1);
    const pending = factOf(event('evt_pending', 'charge.pending', 1), 2);
    assert.deepEqual(foldPaymentFacts(null, [paid]).state, foldPaymentFacts(null, [paid, pending]).state);
  });

  test('pending, paid and a full refund stamped with the same second chain instead of blocking each other', () => {
    const facts = [
      factOf(event('evt_r', 'charge.refunded', 0, { amountRefunded: 2000 }), 1),
      factOf(event('evt_s', 'charge.succeeded', 0), 2),
      factOf(event('evt_p', 'charge.pending', 0), 3),
    ];
    const { state, applied } = foldPaymentFacts(null, facts);
    assert.equal(state!.status, 'refunded');
    assert.equal(state!.amountRefunded, 2000);
    assert.deepEqual(
      applied.map((k) => k.fact.status),
      ['pending', 'paid', 'refunded'],
    );
  });

  test('charge.captured beside charge.succeeded and a dispute in the same second is not a won dispute', () => {
    const facts = [
      factOf(event('evt_s', 'charge.succeeded', 0), 1),
      factOf(event('evt_d', 'charge.dispute.created', 0), 2),
      factOf(event('evt_c', 'charge.captured', 0), 3),
    ];
    assert.equal(foldPaymentFacts(null, facts).state!.status, 'disputed');
  });

  test('a further partial refund raises amount_refunded; an older, smaller one arriving late does not lower it', () => {
    const paid = factOf(event('evt_s', 'charge.succeeded', 1), 1);
    const second = factOf(event('evt_r2', 'charge.refunded', 9, { amountRefunded: 1500 }), 2);
    const first = factOf(event('evt_r1', 'charge.refunded', 5, { amountRefunded: 500 }), 3);
    const state = foldPaymentFacts(null, [paid, second, first]).state!;
    assert.equal(state.status, 'partially_refunded');
    assert.equal(state.amountRefunded, 1500);
  });

  test('a manual-capture charge (captured: false) then charge.expired ends canceled with nothing refunded, never paid', () => {
    const held = factOf(chargeEvent({ id: 'evt_held', type: 'charge.succeeded', chargeId: 'ch_fold', created: BASE, amount: 2000, captured: false }), 1);
    // Stripe marks a lapsed authorization refunded in full: still, nothing was taken.
    const expired = factOf(
      chargeEvent({
        id: 'evt_exp',
        type: 'charge.expired',
        chargeId: 'ch_fold',
        created: BASE + 7 * 86_400,
        amount: 2000,
        captured: false,
        amountRefunded: 2000,
      }),
      2,
    );
    assert.equal(foldPaymentFacts(null, [held]).state!.status, 'authorized');
    for (const order of [
      [held, expired],
      [expired, held],
    ]) {
      const { state, applied } = foldPaymentFacts(null, order);
      assert.deepEqual([state!.status, state!.amountRefunded], ['canceled', 0]);
      assert.ok(!applied.some((k) => k.fact.status === 'paid'));
    }
  });

  test('a declined attempt and a successful one stamped with the same second end paid, whatever the inbox order', () => {
    const failed = (id: number) =>
      factOf(chargeEvent({ id: 'evt_f', type: 'charge.failed', chargeId: 'ch_a', paymentIntent: 'pi_fold', created: BASE, captured: false }), id);
    const paid = (id: number) => factOf(chargeEvent({ id: 'evt_p', type: 'charge.succeeded', chargeId: 'ch_b', paymentIntent: 'pi_fold', created: BASE }), id);
    assert.equal(foldPaymentFacts(null, [failed(1), paid(2)]).state!.status, 'paid');
    assert.equal(foldPaymentFacts(null, [paid(1), failed(2)]).state!.status, 'paid');
  });

  test('require mode folds from the row the application created', () => {
    const baseline = {
      status: 'paid' as const,
      amount: 2000,
      amountRefunded: 0,
      currency: 'BRL',
      lastGatewayEventAt: null,
      inquiryOpen: false,
      statusBeforeDispute: null,
      split: null,
    };
    const pending = factOf(event('evt_p', 'charge.pending', 1), 1);
    assert.deepEqual(foldPaymentFacts(baseline, [pending]).state, baseline, 'a pending webhook never demotes the app-created paid row');
    const refunded = factOf(event('evt_r', 'charge.refunded', 2, { amountRefunded: 2000 }), 2);
    assert.equal(foldPaymentFacts(baseline, [pending, refunded]).state!.status, 'refunded');
  });

  test('property: for any arrival order with duplicates, the fold equals the reference model in true order', () => {
    fc.assert(
      fc.property(scenarioWithArrivalArb, ({ scenario, arrival }) => {
        const events = stripeEvents(scenario, 'ch_prop', BASE);
        // Deliveries of one event are one inbox row (the unique index), so one fact.
        const firstArrivals = arrival.filter((index, position) => arrival.indexOf(index) === position);
        const facts = firstArrivals.map((index, position) => factOf(events[index]!.body, position + 1));
        const state = foldPaymentFacts(null, facts).state!;
        const expected = referenceOutcome(scenario);
        assert.deepEqual(
          {
            status: state.status,
            amount: state.amount,
            amountRefunded: state.amountRefunded,
            inquiryOpen: state.inquiryOpen,
            last: state.lastGatewayEventAt!.getTime() / 1000 - BASE,
          },
          {
            status: expected.status,
            amount: expected.amount,
            amountRefunded: expected.amountRefunded,
            inquiryOpen: expected.inquiryOpen,
            last: expected.lastEventSecond,
          },
        );
      }),
      { numRuns: 3000 },
    );
  });
});
