import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type PaymentToMatch, matchLedger } from '../../src/reconciliation/match.ts';
import type { StoredEntry } from '../../src/reconciliation/settlement.ts';

const now = new Date('2026-12-01T12:00:00Z');
const daysBefore = (days: number) => new Date(now.getTime() - days * 86_400_000);

const payment = (fields: Partial<PaymentToMatch> & { key: string }): PaymentToMatch => ({
  id: 1,
  status: 'paid',
  amount: 1000,
  amountRefunded: 0,
  currency: 'EUR',
  createdAt: daysBefore(10),
  updatedAt: daysBefore(10),
  ...fields,
});

const entry = (fields: Partial<StoredEntry> & { entryId: string; kind: string; amount: number }): StoredEntry => ({
  gatewayType: fields.kind,
  chargeId: 'ch_1',
  paymentKey: 'pi_1',
  payoutId: null,
  fee: 0,
  net: fields.amount - (fields.fee ?? 0),
  currency: 'eur',
  status: 'available',
  availableAt: null,
  createdAt: daysBefore(9),
  ...fields,
});

const kinds = (input: Parameters<typeof matchLedger>[0]) => matchLedger(input).findings.map((f) => f.kind);
const base = { provider: 'stripe', payouts: [], now, settlementDays: 2 };

describe('matching a payment against its ledger entries', () => {
  test('a charge settled in another currency (Stripe converts to the balance currency): amounts are not compared', () => {
    assert.deepEqual(
      kinds({ ...base, payments: [payment({ key: 'pi_1' })], entries: [entry({ entryId: 'txn_1', kind: 'charge', amount: 1234, currency: 'usd' })] }),
      [],
    );
  });

  test('a dispute won (withdrawn, then reinstated) leaves nothing charged back: a paid payment is right', () => {
    const entries = [
      entry({ entryId: 'txn_1', kind: 'charge', amount: 1000 }),
      entry({ entryId: 'txn_2', kind: 'chargeback', amount: -1000, fee: 1500 }),
      entry({ entryId: 'txn_3', kind: 'chargeback_reversal', amount: 1000 }),
    ];
    assert.deepEqual(kinds({ ...base, payments: [payment({ key: 'pi_1' })], entries }), []);
  });

  test("currencies compare without regard to case (the ledger keeps the gateway's lower case)", () => {
    assert.deepEqual(
      kinds({ ...base, payments: [payment({ key: 'pi_1', amount: 999 })], entries: [entry({ entryId: 'txn_1', kind: 'charge', amount: 1000 })] }),
      ['amount_mismatch'],
    );
  });

  test('a legacy payment row under the charge id matches an entry that names the PaymentIntent too', () => {
    const legacy = payment({ key: 'ch_1' });
    assert.deepEqual(kinds({ ...base, payments: [legacy], entries: [entry({ entryId: 'txn_1', kind: 'charge', amount: 1000 })] }), []);
  });

  test('a payment still pending, or paid within the settlement delay, expects no credit yet', () => {
    const payments = [payment({ key: 'pi_pending', status: 'pending', id: 1 }), payment({ key: 'pi_recent', createdAt: daysBefore(1), id: 2 })];
    assert.deepEqual(kinds({ ...base, payments, entries: [] }), []);
  });
});
