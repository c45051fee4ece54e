import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { stripeLedger } from '../../../src/gateways/stripe/ledger.ts';
import { stripeDriver } from '../../../src/gateways/stripe/webhook-driver.ts';
import { fixtureBalanceTransaction, fixtureEventBody, fixturePayout } from '../../support/stripe-objects.ts';
import { createDriver, webhookRequest } from '../request.ts';

const page = (data: unknown[]) => ({ object: 'list', url: '/v1/balance_transactions', has_more: false, data });

describe('the Stripe ledger reader', () => {
  test("Stripe's own published balance_transaction reads as a charge credit of its charge (no PaymentIntent: keyed by the charge)", () => {
    const [read] = stripeLedger.readEntries(page([fixtureBalanceTransaction({})])).entries;
    assert.ok(read?.ok);
    const { entryId, kind, chargeId, paymentKey, amount, fee, net, currency, status } = read.entry;
    assert.deepEqual(
      { entryId, kind, chargeId, paymentKey, amount, fee, net, currency, status },
      {
        entryId: 'txn_1PgaxNB7WZ01zgkWEV3TLf40',
        kind: 'charge',
        chargeId: 'ch_1PgafuB7WZ01zgkWXYmPNZs8',
        paymentKey: 'ch_1PgafuB7WZ01zgkWXYmPNZs8',
        amount: 100,
        fee: 0,
        net: 100,
        currency: 'usd',
        status: 'available',
      },
    );
  });

  test('ISK, which Stripe counts in hundredths, is stored in ISO 4217 króna as the payments are; a fractional króna is unreadable, not rounded', () => {
    const [whole, fractional] = stripeLedger.readEntries(
      page([
        fixtureBalanceTransaction({ id: 'txn_isk', currency: 'isk', amount: 400000, fee: 12000, net: 388000 }),
        fixtureBalanceTransaction({ id: 'txn_isk_frac', currency: 'isk', amount: 400050, fee: 0, net: 400050 }),
      ]),
    ).entries;
    assert.ok(whole?.ok);
    assert.deepEqual([whole.entry.amount, whole.entry.fee, whole.entry.net, whole.entry.currency], [4000, 120, 3880, 'isk']);
    assert.ok(fractional && !fractional.ok);
    assert.match(fractional.unreadable.reason, /not a whole amount in ISK's ISO 4217 minor units/);
    assert.equal(stripeLedger.payouts!.readPayout(fixturePayout({ currency: 'isk', amount: 388000 })).amount, 3880);
  });

  test('a net that is not amount − fee is unreadable; a page without has_more is no page at all', () => {
    const [read] = stripeLedger.readEntries(page([fixtureBalanceTransaction({ net: 99 })])).entries;
    assert.ok(read && !read.ok);
    assert.match(read.unreadable.reason, /"net" \(99\) is not "amount" − "fee"/);
    assert.throws(() => stripeLedger.readEntries({ object: 'list', data: [] }), /no "has_more"/);
  });

  test("a payout webhook is stored with the payout as its resource: what the cron's payout runs look for", () => {
    const driver = createDriver(stripeDriver, { secrets: ['whsec_unused'] });
    for (const type of stripeLedger.payouts!.settledEventTypes) {
      const body = fixtureEventBody(`evt_${type}`, type as 'payout.paid', 1_760_000_000, fixturePayout({ id: 'po_announced' }));
      const event = driver.parse(webhookRequest(body), new Date('2026-01-01T00:00:00Z'));
      assert.deepEqual([event.eventType, event.resourceId], [type, 'po_announced']);
    }
  });
});
