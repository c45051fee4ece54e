import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decidePaymentEvent, rejectedMoneyMovement } from '../../src/domain/payments/event-decision.ts';
import { type KnownFact, foldPaymentFacts } from '../../src/domain/payments/fold.ts';
import type { PaymentStatus } from '../../src/domain/payments/payment-fact.ts';

const T = Date.UTC(2026, 10, 1, 12, 0, 0);
const fact = (inboxId: number, status: PaymentStatus, at: number, snapshot = false): KnownFact => ({
  inboxId,
  fact: { kind: `payment.${status}`, chargeId: 'ch_decide', status, occurredAt: new Date(at), amount: 1000, ...(snapshot ? { snapshot: true as const } : {}) },
});

/** The decision the event gets when it joins what was known, as apply-payment-events.ts asks it. */
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
    assert.deepEqual(dispute, { decision: 'rejected_transition', detail: { from: 'refunded', to: 'disputed', occurredAt: new Date(T + 120_000).toISOString() } });
    assert.equal(rejectedMoneyMovement(dispute), 'payment.disputed');
    const latePending = decide(history, fact(4, 'pending', T + 180_000));
    assert.equal(latePending.decision, 'rejected_transition');
    assert.equal(rejectedMoneyMovement(latePending), undefined);
  });
});
