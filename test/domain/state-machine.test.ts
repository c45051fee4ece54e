import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { paymentStatuses } from '../../src/domain/payments/payment-fact.ts';
import { canTransitionTo } from '../../src/domain/payments/state-machine.ts';
import { issueTransitions as expected } from './charge-scenarios.ts';

describe('canTransitionTo', () => {
  test('allows exactly the lifecycle transitions, for all 81 pairs', () => {
    for (const from of paymentStatuses) {
      for (const to of paymentStatuses) {
        assert.equal(canTransitionTo(from, to), expected.has(`${from}>${to}`), `${from} → ${to}`);
      }
    }
  });

  test('a late pending never demotes a settled payment', () => {
    for (const from of paymentStatuses) assert.equal(canTransitionTo(from, 'pending'), false, from);
  });

  test('canceled, refunded and charged_back are terminal', () => {
    for (const from of ['canceled', 'refunded', 'charged_back'] as const) {
      assert.deepEqual(
        paymentStatuses.filter((to) => canTransitionTo(from, to)),
        [],
        from,
      );
    }
  });

  test('authorization is not payment: an authorized payment is captured (paid) or released (canceled), never refunded or disputed', () => {
    assert.deepEqual(
      paymentStatuses.filter((to) => canTransitionTo('authorized', to)),
      ['paid', 'failed', 'canceled'],
    );
  });

  test('a failed attempt moves on only to another attempt that is authorized or paid', () => {
    assert.deepEqual(
      paymentStatuses.filter((to) => canTransitionTo('failed', to)),
      ['authorized', 'paid'],
    );
  });
});
