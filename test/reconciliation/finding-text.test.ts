import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { describeFinding } from '../../src/reconciliation/finding-text.ts';

const payment = { paymentId: 7, key: 'pay_card_lost', status: 'paid', amount: 3000, amountRefunded: 0, currency: 'BRL', createdAt: '2026-10-27T12:00:00.000Z' };

describe('a finding in one line', () => {
  test('a missing credit says what the gateway expected when its payment was read', () => {
    const expected = describeFinding({
      kind: 'missing_credit',
      payment,
      settlementDays: 35,
      gatewaySays: { netAmount: 2901, expectedCreditAt: '2026-11-28T03:00:00.000Z', creditedAt: null },
    });
    assert.equal(
      expected,
      "missing_credit: payment pay_card_lost (#7) is paid, 3000 BRL, first seen 2026-10-27T12:00:00.000Z; the ledger holds no credit for it after 35 days, and the gateway's payment expected it to net 2901 on 2026-11-28T03:00:00.000Z: check the charge at the gateway (captured? settled to another account?)",
    );
    const credited = describeFinding({
      kind: 'missing_credit',
      payment,
      settlementDays: 35,
      gatewaySays: { netAmount: 2901, expectedCreditAt: null, creditedAt: '2026-11-28T03:00:00.000Z' },
    });
    assert.match(credited, /though the gateway's payment says it was credited to net 2901 on 2026-11-28T03:00:00\.000Z/);
    assert.doesNotMatch(describeFinding({ kind: 'missing_credit', payment, settlementDays: 2 }), /gateway's payment/);
  });

  test('a payout that does not add up says by how much', () => {
    assert.equal(
      describeFinding({ kind: 'payout_mismatch', payoutId: 'po_1', payoutAmount: 1100, currency: 'usd', entriesNet: 1105, entryCount: 2 }),
      'payout_mismatch: payout po_1 paid 1100 usd; its 2 entries add up to 1105 (a difference of -5)',
    );
  });
});
