import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type KnownFact, foldPaymentFacts } from '../../src/domain/payments/fold.ts';
import type { PaymentFact } from '../../src/domain/payments/payment-fact.ts';
import { asaasDriver } from '../../src/gateways/asaas/webhook-driver.ts';
import { mapMercadoPagoPayment } from '../../src/gateways/mercadopago/api.ts';
import { pagarmeDriver } from '../../src/gateways/pagarme/webhook-driver.ts';
import { pagarmeLegacyDriver } from '../../src/gateways/pagarme-legacy/webhook-driver.ts';
import type { DriverDefinition } from '../../src/gateways/shared/webhook-driver.ts';
import { zoopDriver } from '../../src/gateways/zoop/webhook-driver.ts';
import { createDriver, webhookRequest } from '../gateways/request.ts';

/**
 * Each gateway's dispute lifecycle as it documents its events (docs/disputes.md), through its own
 * driver (or, for Mercado Pago, whose notices carry no state, its API mapping read at each step),
 * folded in every arrival order: the payment ends as the true order ends. Stripe's are in
 * charge-scenarios.ts (the property of fold.test.ts) and test/delivery/disputes.test.ts.
 */

const now = new Date('2026-01-01T00:00:00Z');

function factsOf(definition: DriverDefinition, bodies: string[], settings: Parameters<typeof createDriver>[1] = {}): PaymentFact[] {
  const driver = createDriver(definition, settings);
  return bodies.map((body) => {
    const fact = driver.toPaymentFact({ provider: 'test', ...driver.parse(webhookRequest(body), now), payloadLossy: false });
    assert.ok(fact, `a payment fact: ${body.slice(0, 120)}`);
    return fact;
  });
}

const view = (facts: readonly KnownFact[]) => {
  const state = foldPaymentFacts(null, facts).state!;
  return { status: state.status, amountRefunded: state.amountRefunded };
};

/** Every arrival order ends where the true order ends, which is `expected`. */
function assertEveryOrder(facts: PaymentFact[], expected: ReturnType<typeof view>) {
  const known = facts.map((fact, index) => ({ inboxId: index + 1, fact }));
  assert.deepEqual(view(known), expected, 'in true order');
  fc.assert(
    fc.property(fc.shuffledSubarray(known, { minLength: known.length, maxLength: known.length }), (arrival) => {
      assert.deepEqual(view(arrival), expected);
    }),
    { numRuns: 100 },
  );
}

describe('dispute lifecycles, gateway by gateway, in every arrival order', () => {
  test('Pagar.me v5: paid, partly canceled (refunded), then charge.chargedback with no dispute event → charged back, the refund kept', () => {
    const hook = (id: string, type: string, at: string, data: Record<string, unknown>) =>
      JSON.stringify({
        id,
        account: { id: 'acc_1', name: 'Loja' },
        type,
        created_at: at,
        data: { id: 'ch_pgcb', amount: 5000, currency: 'BRL', paid_amount: 5000, paid_at: '2025-03-01T10:00:00Z', ...data },
      });
    const facts = factsOf(
      pagarmeDriver,
      [
        hook('hook_1', 'charge.paid', '2025-03-01T10:00:00Z', { status: 'paid', last_transaction: { status: 'captured' } }),
        hook('hook_2', 'charge.partial_canceled', '2025-03-05T10:00:00Z', {
          status: 'paid',
          canceled_amount: 1200,
          last_transaction: { status: 'partial_refunded' },
        }),
        hook('hook_3', 'charge.chargedback', '2025-04-20T10:00:00Z', { status: 'chargedback', last_transaction: { status: 'chargedback' } }),
      ],
      { options: { jwksUrl: 'https://127.0.0.1/unused' } },
    );
    assertEveryOrder(facts, { status: 'charged_back', amountRefunded: 1200 });
  });

  test('Pagar.me postbacks: paid, then chargedback → charged back', () => {
    const postback = (current: string, old: string, updated: string) =>
      new URLSearchParams({
        id: '777001',
        event: 'transaction_status_changed',
        old_status: old,
        desired_status: current,
        current_status: current,
        object: 'transaction',
        'transaction[status]': current,
        'transaction[amount]': '3100',
        'transaction[refunded_amount]': '0',
        'transaction[date_updated]': updated,
      }).toString();
    const bodies = [postback('paid', 'waiting_payment', '2018-09-06T19:55:14.063Z'), postback('chargedback', 'paid', '2018-10-20T12:00:00.000Z')];
    // Parsed and mapped only: their signatures are the end-to-end test's (test/gateways/gateways-e2e.test.ts).
    assertEveryOrder(factsOf(pagarmeLegacyDriver, bodies, { secrets: ['ak_test_lifecycle'] }), { status: 'charged_back', amountRefunded: 0 });
  });

  test('Zoop: succeeded, then charged_back with no dispute → charged back; disputed then charged_back → charged back', () => {
    const event = (id: string, type: string, at: string, status: string) =>
      JSON.stringify({
        id,
        type,
        resource: 'event',
        created_at: at,
        payload: { object: { id: 'zoop_tx_1', resource: 'transaction', status, amount: '61.00', currency: 'BRL', captured: true } },
      });
    const succeeded = event('e1', 'transaction.succeeded', '2025-03-02T10:00:00+0000', 'succeeded');
    const chargedBack = event('e3', 'transaction.charged_back', '2025-04-02T10:00:00+0000', 'charged_back');
    assertEveryOrder(factsOf(zoopDriver, [succeeded, chargedBack]), { status: 'charged_back', amountRefunded: 0 });
    const disputed = event('e2', 'transaction.disputed', '2025-03-20T10:00:00+0000', 'dispute');
    assertEveryOrder(factsOf(zoopDriver, [succeeded, disputed, chargedBack]), { status: 'charged_back', amountRefunded: 0 });
  });

  test('Asaas: received, partly refunded, chargeback requested, then awaiting its reversal (won) → partially refunded again', () => {
    const event = (id: string, name: string, at: string, payment: Record<string, unknown>) =>
      JSON.stringify({
        id,
        event: name,
        dateCreated: at,
        payment: { object: 'payment', id: 'pay_asaas_cb', value: 300.0, billingType: 'CREDIT_CARD', ...payment },
      });
    const refunds = [{ status: 'DONE', value: 50.0 }];
    const facts = factsOf(
      asaasDriver,
      [
        event('evt_1&1', 'PAYMENT_RECEIVED', '2025-03-01 10:00:00', { status: 'RECEIVED' }),
        event('evt_2&2', 'PAYMENT_PARTIALLY_REFUNDED', '2025-03-03 10:00:00', { status: 'RECEIVED', refunds }),
        event('evt_3&3', 'PAYMENT_CHARGEBACK_REQUESTED', '2025-04-01 10:00:00', { status: 'CHARGEBACK_REQUESTED', refunds }),
        event('evt_4&4', 'PAYMENT_AWAITING_CHARGEBACK_REVERSAL', '2025-05-01 10:00:00', { status: 'AWAITING_CHARGEBACK_REVERSAL', refunds }),
      ],
      { secrets: ['asaas-token-for-parse-only-0123456789'] },
    );
    assertEveryOrder(facts, { status: 'partially_refunded', amountRefunded: 5000 });
  });

  test('Mercado Pago (read at each notice): approved, charged_back in_process (open), charged_back reimbursed (won) → paid', () => {
    const read = (at: string, status: string, statusDetail: string, refunded = 0): PaymentFact => {
      const state = mapMercadoPagoPayment({
        id: 1316836507,
        status,
        status_detail: statusDetail,
        currency_id: 'BRL',
        transaction_amount: 150.5,
        transaction_amount_refunded: refunded,
      });
      return {
        kind: `payment.${state.status}`,
        chargeId: state.chargeId,
        status: state.status,
        occurredAt: new Date(at),
        amount: state.amount,
        amountRefunded: state.amountRefunded,
        currency: state.currency,
        snapshot: true,
      };
    };
    const opened = read('2025-03-10T10:00:00Z', 'charged_back', 'in_process');
    assert.equal(opened.status, 'disputed');
    assertEveryOrder([read('2025-03-01T10:00:00Z', 'approved', 'accredited'), opened, read('2025-04-10T10:00:00Z', 'charged_back', 'reimbursed')], {
      status: 'paid',
      amountRefunded: 0,
    });
    assertEveryOrder([read('2025-03-01T10:00:00Z', 'approved', 'accredited'), opened, read('2025-04-10T10:00:00Z', 'charged_back', 'settled')], {
      status: 'charged_back',
      amountRefunded: 0,
    });
  });
});
