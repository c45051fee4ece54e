/**
 * The split in the fold: the newest fact that says one wins, a fact that says none leaves it, a
 * change of the split alone is news to the application, and a checkpoint keeps it (one written
 * before the split existed reads as none).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/domain/payments/checkpoint.ts';
import { type KnownFact, foldPaymentFacts, samePayment } from '../../src/domain/payments/fold.ts';
import { type PaymentFact, type SplitShare, paymentKind } from '../../src/domain/payments/payment-fact.ts';
import { fromStoredFact, toStoredFact } from '../../src/domain/payments/stored-fact.ts';

const share = (recipientId: string, percentage: number): SplitShare => ({
  recipientId,
  ruleId: null,
  amount: null,
  percentage,
  liable: true,
  chargeProcessingFee: true,
  chargeRemainderFee: false,
});
const halves = [share('rp_a', 50), share('rp_b', 50)];
const other = [share('rp_a', 70), share('rp_b', 30)];

function fact(inboxId: number, status: PaymentFact['status'], second: number, extra: Partial<PaymentFact> = {}): KnownFact {
  return {
    inboxId,
    fact: {
      kind: paymentKind(status),
      chargeId: 'ch_1',
      status,
      occurredAt: new Date(Date.UTC(2026, 0, 1, 0, 0, second)),
      amount: 1000,
      currency: 'BRL',
      ...extra,
    },
  };
}

describe('the split in the fold', () => {
  test('a later fact without a split keeps it; a later one with another split replaces it', () => {
    const kept = foldPaymentFacts(null, [fact(1, 'paid', 1, { split: halves }), fact(2, 'partially_refunded', 2, { amountRefunded: 100 })]);
    assert.deepEqual(kept.state?.split, halves);
    const replaced = foldPaymentFacts(null, [fact(1, 'authorized', 1, { split: halves }), fact(2, 'paid', 2, { split: other })]);
    assert.deepEqual(replaced.state?.split, other);
    assert.equal(foldPaymentFacts(null, [fact(1, 'paid', 1)]).state?.split, null);
  });

  test('a change of the split alone is a change of the payment', () => {
    const before = foldPaymentFacts(null, [fact(1, 'paid', 1, { split: halves })]).state!;
    assert.equal(samePayment(before, { ...before, split: other }), false);
    assert.equal(samePayment(before, { ...before, split: halves.map((s) => ({ ...s })) }), true);
  });

  test('a checkpoint keeps it, and a fold resumed from it keeps it; an old checkpoint reads as none', () => {
    const state = foldPaymentFacts(null, [fact(1, 'paid', 1, { split: halves })]).state!;
    const resumed = decodeCheckpoint(JSON.parse(encodeCheckpoint(state)));
    assert.deepEqual(resumed?.split, halves);
    assert.deepEqual(foldPaymentFacts(resumed, [fact(2, 'refunded', 2, { amountRefunded: 1000 })]).state?.split, halves);
    const { split: _, ...older } = state;
    assert.equal(decodeCheckpoint(JSON.parse(encodeCheckpoint(older as typeof state)))?.split, null);
  });

  test('the stored fact keeps the split, and a stored fact without one has none', () => {
    const withSplit = fact(1, 'paid', 1, { split: halves }).fact;
    assert.deepEqual(fromStoredFact(JSON.parse(JSON.stringify(toStoredFact(withSplit))))?.split, halves);
    assert.equal(fromStoredFact(JSON.parse(JSON.stringify(toStoredFact(fact(2, 'paid', 2).fact))))?.split, undefined);
  });
});
