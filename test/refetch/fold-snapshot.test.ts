import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type KnownFact, foldPaymentFacts } from '../../src/domain/payments/fold.ts';
import { type PaymentFact, type PaymentStatus, paymentKind } from '../../src/domain/payments/payment-fact.ts';
import { fromStoredFact, toStoredFact } from '../../src/domain/payments/stored-fact.ts';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
let nextId = 1;

function webhook(status: PaymentStatus, seconds: number, extra: Partial<PaymentFact> = {}): KnownFact {
  return {
    inboxId: nextId++,
    fact: { kind: paymentKind(status), chargeId: 'ch_1', status, occurredAt: new Date(T0 + seconds * 1000), amount: 2000, ...extra },
  };
}

function snapshot(status: PaymentStatus, millis: number, amountRefunded = 0): KnownFact {
  return {
    inboxId: nextId++,
    fact: {
      kind: paymentKind(status),
      chargeId: 'ch_1',
      status,
      occurredAt: new Date(T0 + millis),
      amount: 2000,
      amountRefunded,
      currency: 'BRL',
      snapshot: true,
    },
  };
}

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

function finalStatus(facts: readonly KnownFact[]): PaymentStatus {
  return foldPaymentFacts(null, facts).state!.status;
}

describe('a gateway snapshot in the fold', () => {
  test('resets the state: a stale pending webhook next to a paid snapshot ends paid, in every arrival order', () => {
    const facts = [webhook('pending', 1), snapshot('paid', 5_000)];
    for (const order of permutations(facts)) assert.equal(finalStatus(order), 'paid');
  });

  test('is not subject to the state machine: it moves even a terminal status (the gateway is the truth)', () => {
    assert.equal(finalStatus([webhook('failed', 1), snapshot('paid', 5_000)]), 'paid', 'failed → paid is no transition, a snapshot is no transition either');
  });

  test('webhooks after it apply through the state machine again', () => {
    assert.equal(finalStatus([snapshot('paid', 5_000), webhook('refunded', 9, { amountRefunded: 2000 })]), 'refunded');
    assert.equal(finalStatus([snapshot('paid', 5_000), webhook('pending', 9)]), 'paid', 'a later pending never demotes');
    assert.equal(finalStatus([snapshot('refunded', 5_000, 2000), webhook('disputed', 9)]), 'refunded', 'refunded is terminal for webhooks');
  });

  test('webhooks before it are what it already reflects: they are superseded whatever their order', () => {
    const facts = [webhook('pending', 1), webhook('paid', 2), webhook('disputed', 3), snapshot('charged_back', 4_000)];
    for (const order of permutations(facts)) assert.equal(finalStatus(order), 'charged_back');
  });

  test('a webhook stamped in the second of the read may be newer than the read: it applies after the reset', () => {
    // Read at 10.500 s; the gateway stamps whole seconds, so a refund at "10 s" may be 10.7 s.
    assert.equal(finalStatus([snapshot('paid', 10_500), webhook('refunded', 10, { amountRefunded: 2000 })]), 'refunded');
    assert.equal(finalStatus([snapshot('paid', 10_500), webhook('pending', 10)]), 'paid', 'and one it reflects changes nothing');
    assert.equal(finalStatus([snapshot('paid', 10_500), webhook('refunded', 9, { amountRefunded: 2000 })]), 'paid', 'a second earlier it was reflected');
  });

  test('the newest snapshot wins; its amounts replace the old ones', () => {
    const facts = [snapshot('partially_refunded', 3_000, 500), snapshot('paid', 1_000), webhook('paid', 0)];
    for (const order of permutations(facts)) {
      const state = foldPaymentFacts(null, order).state!;
      assert.equal(state.status, 'partially_refunded');
      assert.equal(state.amountRefunded, 500);
      assert.equal(state.currency, 'BRL');
      assert.equal(state.lastGatewayEventAt!.getTime(), T0 + 3_000);
    }
  });

  test('in require mode it resets the application-created baseline too', () => {
    const baseline = {
      status: 'pending' as const,
      amount: 2000,
      amountRefunded: 0,
      currency: 'BRL',
      lastGatewayEventAt: null,
      inquiryOpen: false,
      statusBeforeDispute: null,
      split: null,
    };
    assert.equal(foldPaymentFacts(baseline, [snapshot('paid', 1_000)]).state!.status, 'paid');
  });
});

describe('webhook_inbox.fact', () => {
  test('round-trips a snapshot and a webhook fact', () => {
    const snap = snapshot('partially_refunded', 1_234, 500).fact;
    assert.deepEqual(fromStoredFact(JSON.parse(JSON.stringify(toStoredFact(snap)))), snap);
    const plain = webhook('paid', 2).fact;
    assert.deepEqual(fromStoredFact(JSON.parse(JSON.stringify(toStoredFact(plain)))), plain);
  });

  test('anything else reads as no recorded fact (the payload is used instead)', () => {
    assert.equal(fromStoredFact(null), undefined);
    assert.equal(fromStoredFact({ status: 'teleported', chargeId: 'x', occurredAt: new Date(T0).toISOString() }), undefined);
    assert.equal(fromStoredFact({ status: 'paid', chargeId: 'x', occurredAt: 'yesterday' }), undefined);
  });
});
