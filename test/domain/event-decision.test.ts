import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decidePaymentEvent, hadEffect, rejectedMoneyMovement } from '../../src/domain/payments/event-decision.ts';
import { type KnownFact, foldPaymentFacts } from '../../src/domain/payments/fold.ts';
import type { PaymentStatus } from '../../src/domain/payments/payment-fact.ts';
import { describeDecision } from '../../src/operations/decision-text.ts';

const T = Date.UTC(2026, 10, 1, 12, 0, 0);
const fact = (inboxId: number, status: PaymentStatus, at: number, snapshot = false): KnownFact => ({
  inboxId,
  fact: { kind: `payment.${status}`, chargeId: 'ch_decide', status, occurredAt: new Date(at), amount: 1000, ...(snapshot ? { snapshot: true as const } : {}) },
});

/** The decision the event gets when it joins what was known, as fold-charges.ts asks it. */
function decide(known: KnownFact[], event: KnownFact) {
  const before = foldPaymentFacts(null, known).state;
  const fold = foldPaymentFacts(null, [...known, event]);
  return decidePaymentEvent({ event, before, after: fold.state!, fold });
}

describe('decidePaymentEvent', () => {
  test('a webhook of the very second a gateway read was sent in, refused after it, is superseded by the read (not a rejected transition)', () => {
    const read = fact(1, 'refunded', T + 300, true);
    const decision = decide([read], fact(2, 'paid', T));
    assert.deepEqual(decision, {
      decision: 'superseded',
      detail: { status: 'paid', occurredAt: new Date(T).toISOString(), snapshotInboxId: 1, observedAt: new Date(T + 300).toISOString() },
    });
    assert.equal(rejectedMoneyMovement(decision), undefined);
  });

  test('a dispute after a refund is a rejected money movement; a pending after it is rejected too, but moves no money', () => {
    const history = [fact(1, 'paid', T), fact(2, 'refunded', T + 60_000)];
    const dispute = decide(history, fact(3, 'disputed', T + 120_000));
    assert.deepEqual(dispute, {
      decision: 'rejected_transition',
      detail: { from: 'refunded', to: 'disputed', occurredAt: new Date(T + 120_000).toISOString() },
    });
    assert.equal(rejectedMoneyMovement(dispute), 'payment.disputed');
    const latePending = decide(history, fact(4, 'pending', T + 180_000));
    assert.equal(latePending.decision, 'rejected_transition');
    assert.equal(rejectedMoneyMovement(latePending), undefined);
  });

  test('a gateway read that finds the payment as it was has no effect; one that moves only the amounts has', () => {
    const paid = fact(1, 'paid', T);
    const confirming = decide([paid], fact(2, 'paid', T + 60_000, true));
    assert.deepEqual(confirming, {
      decision: 'refetched',
      detail: { observedAt: new Date(T + 60_000).toISOString(), status: 'paid', from: 'paid', to: 'paid', changed: false },
    });
    assert.equal(hadEffect(confirming), false);

    const partly = (inboxId: number, refunded: number, at: number, snapshot = false): KnownFact => ({
      inboxId,
      fact: { ...fact(inboxId, 'partially_refunded', at, snapshot).fact, amountRefunded: refunded },
    });
    const more = decide([paid, partly(2, 100, T + 1000)], partly(3, 300, T + 60_000, true));
    assert.deepEqual([more.decision, hadEffect(more)], ['refetched', true]);
    assert.equal(hadEffect(decide([], fact(1, 'paid', T, true))), true, 'a read that creates the payment');
  });

  test('a read that changes nothing says why: the payment already was that, or newer events keep it as it is', () => {
    const read = new Date(T + 60_000).toISOString();
    const confirming = decide([fact(1, 'paid', T)], fact(2, 'paid', T + 60_000, true));
    assert.equal(
      describeDecision(confirming.decision, confirming.detail),
      `refetched: the gateway said paid when read at ${read}; the payment already was paid, nothing to change`,
    );
    // Read before the refund it has not seen yet: the refund applies after the read, as before.
    const older = decide([fact(1, 'paid', T), fact(2, 'refunded', T + 120_000)], fact(3, 'paid', T + 60_000, true));
    assert.equal(hadEffect(older), false);
    assert.equal(
      describeDecision(older.decision, older.detail),
      `refetched: the gateway said paid when read at ${read}; events after that read keep the payment refunded, nothing to change`,
    );
  });

  test('a refund of more than the amount is rejected_amount: the payment stays as it was, the refusal is a money movement and says the figures', () => {
    const refund = (inboxId: number, refunded: number, at: number, snapshot = false): KnownFact => ({
      inboxId,
      fact: { ...fact(inboxId, 'partially_refunded', at, snapshot).fact, amountRefunded: refunded },
    });
    const history = [fact(1, 'paid', T), refund(2, 600, T + 60_000)];
    // Two refunds that add up past the charge: the second says 1,200 of 1,000 refunded.
    const past = decide(history, refund(3, 1200, T + 120_000));
    const occurredAt = new Date(T + 120_000).toISOString();
    assert.deepEqual(past, { decision: 'rejected_amount', detail: { status: 'partially_refunded', amount: 1000, amountRefunded: 1200, occurredAt } });
    assert.equal(hadEffect(past), false);
    assert.equal(rejectedMoneyMovement(past), 'payment.partially_refunded');
    assert.equal(
      describeDecision(past.decision, past.detail),
      `rejected_amount: says partially_refunded with 1200 refunded of an amount of 1000 (event of ${occurredAt}); the payment is left as it was: check the charge at the gateway`,
    );
    const folded = foldPaymentFacts(null, [...history, refund(3, 1200, T + 120_000)]).state!;
    assert.deepEqual([folded.status, folded.amountRefunded], ['partially_refunded', 600]);

    // A gateway read saying so is refused too: the domain never holds an impossible payment.
    assert.equal(decide(history, refund(4, 1500, T + 180_000, true)).decision, 'rejected_amount');
    // Nor can such an event create a payment.
    const alone = foldPaymentFacts(null, [refund(5, 1200, T)]);
    assert.equal(alone.state, null);
    assert.equal(decidePaymentEvent({ event: alone.refused.keys().next().value!, before: null, after: null, fold: alone }).decision, 'rejected_amount');
  });
});
