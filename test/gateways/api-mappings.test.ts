import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mapAsaasPayment, asaasApi } from '../../src/gateways/asaas/api.ts';
import { mapMercadoPagoPayment } from '../../src/gateways/mercadopago/api.ts';
import { mapPagarmeCharge } from '../../src/gateways/pagarme/api.ts';
import { mapStripeCharge, mapStripePaymentIntent, stripeApi } from '../../src/gateways/stripe/api.ts';
import { GatewayResponseShapeError } from '../../src/gateways/shared/gateway-api.ts';
import { mapZoopTransaction, zoopApi } from '../../src/gateways/zoop/api.ts';

// Shapes follow each gateway's API reference / official SDK types (see each module's comment);
// values are realistic, trimmed to the fields a mapping could plausibly read plus some noise.

function stripeCharge(overrides: Record<string, unknown> = {}) {
  return {
    id: 'ch_3PqXyZ2eZvKYlo2C1AbCdEfG',
    object: 'charge',
    amount: 2000,
    amount_captured: 2000,
    amount_refunded: 0,
    captured: true,
    created: 1724169590,
    currency: 'brl',
    disputed: false,
    failure_code: null,
    livemode: false,
    paid: true,
    payment_intent: 'pi_3PqXyZ2eZvKYlo2C1xYzAbCd',
    refunded: false,
    status: 'succeeded',
    ...overrides,
  };
}

function stripeDispute(status: string) {
  return {
    id: 'dp_1PqZ',
    object: 'dispute',
    amount: 2000,
    charge: 'ch_3PqXyZ2eZvKYlo2C1AbCdEfG',
    currency: 'brl',
    reason: 'fraudulent',
    status,
    is_charge_refundable: false,
  };
}

describe('stripe: GET /v1/charges/{id} → canonical state', () => {
  test('a captured charge with nothing refunded is paid, amounts in minor units, currency upper-cased', () => {
    assert.deepEqual(mapStripeCharge(stripeCharge()), {
      chargeId: 'ch_3PqXyZ2eZvKYlo2C1AbCdEfG',
      status: 'paid',
      amount: 2000,
      amountRefunded: 0,
      currency: 'BRL',
    });
  });

  test('refunds: part of the captured amount → partially_refunded, all of it → refunded', () => {
    assert.equal(mapStripeCharge(stripeCharge({ amount_refunded: 500 })).status, 'partially_refunded');
    assert.equal(mapStripeCharge(stripeCharge({ amount_refunded: 500 })).amountRefunded, 500);
    assert.equal(mapStripeCharge(stripeCharge({ amount_refunded: 2000, refunded: true })).status, 'refunded');
  });

  test('pending and failed charges; an uncaptured authorisation is authorized, a released one canceled with nothing refunded', () => {
    assert.equal(mapStripeCharge(stripeCharge({ status: 'pending', paid: false })).status, 'pending');
    assert.equal(mapStripeCharge(stripeCharge({ status: 'failed', paid: false, captured: false, failure_code: 'card_declined' })).status, 'failed');
    assert.equal(mapStripeCharge(stripeCharge({ captured: false, amount_captured: 0 })).status, 'authorized');
    const released = mapStripeCharge(stripeCharge({ captured: false, amount_captured: 0, refunded: true, amount_refunded: 2000 }));
    assert.deepEqual([released.status, released.amountRefunded], ['canceled', 0]);
  });

  test('a dispute decides first: open → disputed, lost → charged_back, won / warning_closed → the refund view', () => {
    const disputed = stripeCharge({ disputed: true });
    assert.equal(mapStripeCharge(disputed, stripeDispute('needs_response')).status, 'disputed');
    assert.equal(mapStripeCharge(disputed, stripeDispute('under_review')).status, 'disputed');
    assert.equal(mapStripeCharge(disputed, stripeDispute('lost')).status, 'charged_back');
    assert.equal(mapStripeCharge(disputed, stripeDispute('won')).status, 'paid');
    assert.equal(mapStripeCharge(disputed, stripeDispute('warning_closed')).status, 'paid');
    assert.equal(mapStripeCharge(stripeCharge({ disputed: true, amount_refunded: 300 }), stripeDispute('won')).status, 'partially_refunded');
    assert.equal(mapStripeCharge(disputed).status, 'disputed', 'disputed with no dispute listed yet');
  });

  test('an inquiry (warning_*) withdrew nothing: the refund view with the inquiry open; warning_closed and prevented close it', () => {
    const inquired = (status: string, refunded = 0) => mapStripeCharge(stripeCharge({ disputed: true, amount_refunded: refunded }), stripeDispute(status));
    for (const status of ['warning_needs_response', 'warning_under_review']) {
      assert.deepEqual([inquired(status).status, inquired(status).inquiryOpen], ['paid', true], status);
      assert.deepEqual(
        [inquired(status, 300).status, inquired(status, 300).amountRefunded, inquired(status, 300).inquiryOpen],
        ['partially_refunded', 300, true],
        status,
      );
    }
    for (const status of ['warning_closed', 'prevented', 'won'])
      assert.deepEqual([inquired(status).status, inquired(status).inquiryOpen], ['paid', false], status);
    assert.equal(inquired('needs_response').inquiryOpen, false, 'a dispute is no inquiry');
    assert.equal(mapStripeCharge(stripeCharge()).inquiryOpen, undefined, 'no dispute read: the read cannot say');
  });

  test('a disputed charge costs a second call, GET /v1/disputes?charge=…&limit=1; an undisputed one does not', async () => {
    const paths: string[] = [];
    const get = async (path: string) => {
      paths.push(path);
      return path.startsWith('/v1/disputes') ? { object: 'list', data: [stripeDispute('lost')], has_more: false } : stripeCharge({ disputed: true });
    };
    const state = await stripeApi.readCharge('ch_3PqXyZ2eZvKYlo2C1AbCdEfG', get, {});
    assert.equal(state.status, 'charged_back');
    assert.deepEqual(paths, ['/v1/charges/ch_3PqXyZ2eZvKYlo2C1AbCdEfG', '/v1/disputes?charge=ch_3PqXyZ2eZvKYlo2C1AbCdEfG&limit=1']);
    paths.length = 0;
    await stripeApi.readCharge(
      'ch_x',
      async (path) => {
        paths.push(path);
        return stripeCharge({ id: 'ch_x' });
      },
      {},
    );
    assert.deepEqual(paths, ['/v1/charges/ch_x']);
  });

  test('an unknown status or a body that is not a charge is a shape error, never a guess', () => {
    assert.throws(() => mapStripeCharge(stripeCharge({ status: 'teleported' })), GatewayResponseShapeError);
    assert.throws(() => mapStripeCharge({ error: { message: 'x' } }), GatewayResponseShapeError);
    assert.throws(() => mapStripeCharge([]), GatewayResponseShapeError);
  });

  test('a charge without its amounts as integers is a shape error, never read as nothing refunded', () => {
    // Read as 0 refunded, such an answer reset a refunded payment to paid (a snapshot is the truth).
    const { amount_refunded: _, ...withoutRefunded } = stripeCharge({ amount_refunded: 2000, refunded: true });
    assert.throws(() => mapStripeCharge(withoutRefunded), GatewayResponseShapeError);
    assert.throws(() => mapStripeCharge(stripeCharge({ amount_refunded: 'abc', refunded: true })), GatewayResponseShapeError);
    assert.throws(() => mapStripeCharge(stripeCharge({ amount_refunded: -5 })), GatewayResponseShapeError);
    assert.throws(() => mapStripeCharge(stripeCharge({ amount: '2000' })), GatewayResponseShapeError);
    assert.throws(() => mapStripeCharge(stripeCharge({ amount_captured: null })), GatewayResponseShapeError);
    // API versions before amount_captured existed: the amount stands for it.
    const { amount_captured: __, ...withoutCaptured } = stripeCharge({ amount_refunded: 500 });
    assert.equal(mapStripeCharge(withoutCaptured).status, 'partially_refunded');
  });

  test('ids are encoded into the path: an id is data, not a route', async () => {
    const paths: string[] = [];
    await stripeApi
      .readCharge(
        'ch_1/../../v1/balance',
        async (path) => {
          paths.push(path);
          return stripeCharge();
        },
        {},
      )
      .catch(() => {});
    assert.equal(paths[0], '/v1/charges/ch_1%2F..%2F..%2Fv1%2Fbalance');
  });
});

function stripeIntent(status: string, latestCharge: unknown, overrides: Record<string, unknown> = {}) {
  return {
    id: 'pi_3PqXyZ2eZvKYlo2C1xYzAbCd',
    object: 'payment_intent',
    amount: 2000,
    currency: 'brl',
    status,
    capture_method: 'manual',
    latest_charge: latestCharge,
    ...overrides,
  };
}

describe('stripe: a payment keyed by its PaymentIntent is read with GET /v1/payment_intents/{id}?expand[]=latest_charge', () => {
  test("one call reads the intent and its latest charge; the state is the charge's, keyed by the intent", async () => {
    const paths: string[] = [];
    const state = await stripeApi.readCharge(
      'pi_3PqXyZ2eZvKYlo2C1xYzAbCd',
      async (path) => {
        paths.push(path);
        return stripeIntent('succeeded', stripeCharge({ amount_refunded: 500 }));
      },
      {},
    );
    assert.deepEqual(paths, ['/v1/payment_intents/pi_3PqXyZ2eZvKYlo2C1xYzAbCd?expand[]=latest_charge']);
    assert.deepEqual(state, { chargeId: 'pi_3PqXyZ2eZvKYlo2C1xYzAbCd', status: 'partially_refunded', amount: 2000, amountRefunded: 500, currency: 'BRL' });
  });

  test('requires_capture with an uncaptured charge → authorized; canceled (voided or lapsed) → canceled, nothing refunded', () => {
    const uncaptured = stripeCharge({ captured: false, amount_captured: 0 });
    assert.equal(mapStripePaymentIntent(stripeIntent('requires_capture', uncaptured)).status, 'authorized');
    const lapsed = mapStripePaymentIntent(
      stripeIntent('canceled', stripeCharge({ captured: false, amount_captured: 0, refunded: true, amount_refunded: 2000 })),
    );
    assert.deepEqual([lapsed.status, lapsed.amountRefunded], ['canceled', 0]);
  });

  test('a declined latest charge → failed (the intent waits for another attempt); no charge yet → by the intent alone', () => {
    assert.equal(
      mapStripePaymentIntent(stripeIntent('requires_payment_method', stripeCharge({ status: 'failed', paid: false, captured: false }))).status,
      'failed',
    );
    assert.equal(mapStripePaymentIntent(stripeIntent('requires_payment_method', null)).status, 'pending');
    assert.equal(mapStripePaymentIntent(stripeIntent('canceled', null)).status, 'canceled');
    assert.throws(() => mapStripePaymentIntent(stripeIntent('succeeded', 'ch_not_expanded')), GatewayResponseShapeError);
  });

  test('an intent without a charge yet must carry its amount as an integer: never read as 0', () => {
    // The snapshot's amount overwrites the payment's: a missing or malformed one is not an intent this mapping knows.
    const { amount: _, ...withoutAmount } = stripeIntent('requires_capture', null);
    assert.throws(() => mapStripePaymentIntent(withoutAmount), GatewayResponseShapeError);
    assert.throws(() => mapStripePaymentIntent(stripeIntent('requires_payment_method', null, { amount: '2000' })), GatewayResponseShapeError);
    assert.throws(() => mapStripePaymentIntent(stripeIntent('canceled', null, { amount: 20.5 })), GatewayResponseShapeError);
    assert.deepEqual(mapStripePaymentIntent(stripeIntent('requires_capture', null)), {
      chargeId: 'pi_3PqXyZ2eZvKYlo2C1xYzAbCd',
      status: 'authorized',
      amount: 2000,
      amountRefunded: 0,
      currency: 'BRL',
    });
  });

  test('a disputed latest charge costs the dispute list call, by the charge id', async () => {
    const paths: string[] = [];
    const get = async (path: string) => {
      paths.push(path);
      return path.startsWith('/v1/disputes')
        ? { object: 'list', data: [stripeDispute('lost')], has_more: false }
        : stripeIntent('succeeded', stripeCharge({ disputed: true }));
    };
    assert.equal((await stripeApi.readCharge('pi_3PqXyZ2eZvKYlo2C1xYzAbCd', get, {})).status, 'charged_back');
    assert.deepEqual(paths.slice(1), ['/v1/disputes?charge=ch_3PqXyZ2eZvKYlo2C1AbCdEfG&limit=1']);
  });
});

function pagarmeCharge(overrides: Record<string, unknown> = {}) {
  return {
    id: 'ch_GBnP26LF4FkyZvpm',
    code: 'WKDTXRSV7Q-01',
    gateway_id: '2083493',
    amount: 15000,
    paid_amount: 15000,
    status: 'paid',
    currency: 'BRL',
    payment_method: 'credit_card',
    paid_at: '2025-01-01T04:15:39Z',
    created_at: '2025-01-01T04:15:30Z',
    updated_at: '2025-01-01T04:15:39Z',
    customer: { id: 'cus_ADWMDOHxPiEbXLo4', name: 'Tony Stark' },
    last_transaction: { id: 'tran_AbCd', transaction_type: 'credit_card', status: 'captured', success: true },
    ...overrides,
  };
}

describe('pagarme v5: GET /core/v5/charges/{id} → canonical state', () => {
  test('paid (and over/underpaid) → paid; integer cents kept', () => {
    assert.deepEqual(mapPagarmeCharge(pagarmeCharge()), { chargeId: 'ch_GBnP26LF4FkyZvpm', status: 'paid', amount: 15000, amountRefunded: 0, currency: 'BRL' });
    assert.equal(mapPagarmeCharge(pagarmeCharge({ status: 'overpaid', paid_amount: 15100 })).status, 'paid');
    assert.equal(mapPagarmeCharge(pagarmeCharge({ status: 'underpaid', paid_amount: 14000 })).status, 'paid');
  });

  test('a partial cancellation of a paid charge → partially_refunded; a canceled paid charge → refunded', () => {
    const partial = mapPagarmeCharge(pagarmeCharge({ canceled_amount: 5000 }));
    assert.equal(partial.status, 'partially_refunded');
    assert.equal(partial.amountRefunded, 5000);
    const whole = mapPagarmeCharge(pagarmeCharge({ status: 'canceled', canceled_amount: 15000, canceled_at: '2025-01-02T10:00:00Z' }));
    assert.equal(whole.status, 'refunded');
    assert.equal(whole.amountRefunded, 15000);
  });

  test('a refunded charge as Pagar.me reads it back (canceled, no paid_amount nor paid_at, the last transaction refunded) → refunded; voided → canceled', () => {
    const { paid_amount: _, paid_at: __, ...canceled } = pagarmeCharge({ status: 'canceled', canceled_amount: 15000, canceled_at: '2025-01-02T10:00:00Z' });
    const refunded = mapPagarmeCharge({
      ...canceled,
      last_transaction: { id: 'tran_Rf', transaction_type: 'credit_card', amount: 15000, status: 'refunded', success: true },
    });
    assert.deepEqual([refunded.status, refunded.amountRefunded], ['refunded', 15000]);
    const voided = mapPagarmeCharge({
      ...canceled,
      last_transaction: { id: 'tran_Vd', transaction_type: 'credit_card', amount: 15000, status: 'voided', success: true },
    });
    assert.deepEqual([voided.status, voided.amountRefunded], ['canceled', 0]);
  });

  test('an overpaid boleto: the payment is what was paid, and refunding all of it reads refunded, a possible payment', () => {
    const boleto = { amount: 1000, payment_method: 'boleto', last_transaction: { id: 'tran_Bl', transaction_type: 'boleto', status: 'refunded' } };
    assert.deepEqual(mapPagarmeCharge(pagarmeCharge({ ...boleto, status: 'overpaid', paid_amount: 1050 })), {
      chargeId: 'ch_GBnP26LF4FkyZvpm',
      status: 'paid',
      amount: 1050,
      amountRefunded: 0,
      currency: 'BRL',
    });
    const { paid_amount: _, ...refunded } = pagarmeCharge({ ...boleto, status: 'canceled', canceled_amount: 1050 });
    const state = mapPagarmeCharge(refunded);
    assert.deepEqual([state.status, state.amount, state.amountRefunded], ['refunded', 1050, 1050]);
  });

  test('an auth-only charge whose hold was partly released (last transaction partial_void) is still authorized', () => {
    const held = pagarmeCharge({
      status: 'pending',
      paid_amount: 0,
      paid_at: null,
      canceled_amount: 500,
      last_transaction: { id: 'tran_Pv', transaction_type: 'credit_card', status: 'partial_void' },
    });
    assert.deepEqual([mapPagarmeCharge(held).status, mapPagarmeCharge(held).amountRefunded], ['authorized', 0]);
  });

  test('canceled before payment → canceled; pending/processing → pending; failed; chargedback → charged_back', () => {
    // Never paid: no paid_at (the fixture's default says it was paid, which a charge canceled before payment cannot).
    const unpaid = { status: 'canceled', paid_amount: 0, paid_at: null, canceled_amount: 15000 };
    assert.equal(mapPagarmeCharge(pagarmeCharge(unpaid)).status, 'canceled');
    assert.equal(mapPagarmeCharge(pagarmeCharge(unpaid)).amountRefunded, 0);
    assert.equal(mapPagarmeCharge(pagarmeCharge({ status: 'pending', paid_amount: 0, payment_method: 'boleto' })).status, 'pending');
    assert.equal(mapPagarmeCharge(pagarmeCharge({ status: 'processing', paid_amount: 0 })).status, 'pending');
    assert.equal(mapPagarmeCharge(pagarmeCharge({ status: 'failed', paid_amount: 0 })).status, 'failed');
    assert.equal(mapPagarmeCharge(pagarmeCharge({ status: 'chargedback' })).status, 'charged_back');
  });

  test('a charge without an integer amount, or with paid_amount / canceled_amount not integer cents, is a shape error, never read as nothing canceled', () => {
    // Read as 0 canceled, a partially canceled (refunded) charge's snapshot said paid.
    assert.throws(() => mapPagarmeCharge(pagarmeCharge({ canceled_amount: '5000' })), GatewayResponseShapeError);
    assert.throws(() => mapPagarmeCharge(pagarmeCharge({ canceled_amount: 50.5 })), GatewayResponseShapeError);
    assert.throws(() => mapPagarmeCharge(pagarmeCharge({ canceled_amount: -5000 })), GatewayResponseShapeError);
    // Read as 0 paid, a canceled charge that had been paid (refunded) said canceled, nothing returned.
    assert.throws(() => mapPagarmeCharge(pagarmeCharge({ status: 'canceled', paid_amount: '15000', canceled_amount: 15000 })), GatewayResponseShapeError);
    const { amount: _, ...withoutAmount } = pagarmeCharge();
    assert.throws(() => mapPagarmeCharge(withoutAmount), GatewayResponseShapeError);
    assert.throws(() => mapPagarmeCharge(pagarmeCharge({ amount: '15000' })), GatewayResponseShapeError);
    assert.throws(() => mapPagarmeCharge(pagarmeCharge({ amount: 150.5 })), GatewayResponseShapeError);
    // Optional (and nullable) in the v5 charge: absent or null until the charge is paid or canceled.
    assert.equal(mapPagarmeCharge(pagarmeCharge({ canceled_amount: null })).status, 'paid');
    const { paid_amount: __, ...unpaid } = pagarmeCharge({ status: 'pending', paid_at: null });
    assert.equal(mapPagarmeCharge(unpaid).status, 'pending');
  });

  test('an auth-only card charge: pending with its last transaction authorized_pending_capture → authorized', () => {
    const held = {
      status: 'pending',
      paid_amount: 0,
      paid_at: null,
      last_transaction: { id: 'tran_held', transaction_type: 'credit_card', status: 'authorized_pending_capture', success: true },
    };
    assert.equal(mapPagarmeCharge(pagarmeCharge(held)).status, 'authorized');
  });
});

function asaasPayment(overrides: Record<string, unknown> = {}) {
  return {
    object: 'payment',
    id: 'pay_080225913252',
    dateCreated: '2024-06-12',
    customer: 'cus_G7Dvo4iphUNk',
    value: 100.0,
    netValue: 98.01,
    billingType: 'PIX',
    status: 'RECEIVED',
    dueDate: '2024-06-12',
    paymentDate: '2024-06-12',
    invoiceUrl: 'https://www.asaas.com/i/080225913252',
    externalReference: 'order-056984',
    deleted: false,
    refunds: null,
    ...overrides,
  };
}

describe('asaas: GET /v3/payments/{id} → canonical state', () => {
  test('RECEIVED/CONFIRMED → paid, the decimal value in cents, always BRL', () => {
    assert.deepEqual(mapAsaasPayment(asaasPayment()), { chargeId: 'pay_080225913252', status: 'paid', amount: 10000, amountRefunded: 0, currency: 'BRL' });
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'CONFIRMED', value: 19.99 })).amount, 1999);
  });

  test('only DONE refunds count: a partial one → partially_refunded; REFUNDED → refunded', () => {
    const refunds = [
      { dateCreated: '2024-06-13 10:28:40', status: 'DONE', value: 2.0, description: 'Overpayment' },
      { dateCreated: '2024-06-13 11:00:00', status: 'CANCELLED', value: 50.0 },
      { dateCreated: '2024-06-13 12:00:00', status: 'PENDING', value: 10.0 },
    ];
    const partial = mapAsaasPayment(asaasPayment({ refunds }));
    assert.equal(partial.status, 'partially_refunded');
    assert.equal(partial.amountRefunded, 200);
    const refunded = mapAsaasPayment(asaasPayment({ status: 'REFUNDED' }));
    assert.equal(refunded.status, 'refunded');
    assert.equal(refunded.amountRefunded, 10000);
  });

  test('a payment without its value, or with a refund it cannot read, is a shape error, never read as nothing refunded', () => {
    const done = { dateCreated: '2024-06-13 10:28:40', status: 'DONE', value: 2.0, description: 'Overpayment' };
    // A DONE refund whose value was unreadable counted as 0: a partially refunded payment's snapshot said paid.
    assert.throws(() => mapAsaasPayment(asaasPayment({ refunds: [{ ...done, value: undefined }] })), GatewayResponseShapeError);
    assert.throws(() => mapAsaasPayment(asaasPayment({ refunds: [{ ...done, value: 'dois' }] })), GatewayResponseShapeError);
    assert.throws(() => mapAsaasPayment(asaasPayment({ refunds: [{ ...done, value: -2 }] })), GatewayResponseShapeError);
    assert.throws(() => mapAsaasPayment(asaasPayment({ refunds: [{ ...done, status: undefined }] })), GatewayResponseShapeError);
    assert.throws(() => mapAsaasPayment(asaasPayment({ refunds: ['DONE'] })), GatewayResponseShapeError);
    assert.throws(() => mapAsaasPayment(asaasPayment({ refunds: { ...done } })), GatewayResponseShapeError);
    // Without the value, any DONE refund was read as the whole of it (refunded).
    const { value: _, ...withoutValue } = asaasPayment({ refunds: [done] });
    assert.throws(() => mapAsaasPayment(withoutValue), GatewayResponseShapeError);
    assert.throws(() => mapAsaasPayment(asaasPayment({ value: '100,00' })), GatewayResponseShapeError);
    // Documented as present only once a payment has refunds: null or absent is nothing refunded.
    const { refunds: __, ...withoutRefunds } = asaasPayment();
    assert.equal(mapAsaasPayment(withoutRefunds).status, 'paid');
    // A refund not yet DONE has returned nothing, whatever its value says.
    assert.equal(mapAsaasPayment(asaasPayment({ refunds: [{ ...done, status: 'PENDING', value: null }] })).status, 'paid');
  });

  test('chargebacks: requested/in dispute → disputed; AWAITING_CHARGEBACK_REVERSAL (dispute won) → paid', () => {
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'CHARGEBACK_REQUESTED' })).status, 'disputed');
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'CHARGEBACK_DISPUTE' })).status, 'disputed');
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'AWAITING_CHARGEBACK_REVERSAL' })).status, 'paid');
  });

  test('PENDING/OVERDUE → pending, AUTHORIZED → authorized, a deleted or released one → canceled; the key goes in the access_token header', async () => {
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'OVERDUE', paymentDate: null })).status, 'pending');
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'PENDING', deleted: true })).status, 'canceled');
    assert.equal(mapAsaasPayment(asaasPayment({ status: 'AUTHORIZED', billingType: 'CREDIT_CARD', paymentDate: null })).status, 'authorized');
    const released = mapAsaasPayment(asaasPayment({ status: 'REFUNDED', billingType: 'CREDIT_CARD', paymentDate: null, confirmedDate: null }));
    assert.deepEqual([released.status, released.amountRefunded], ['canceled', 0]);
    assert.deepEqual(asaasApi.authHeaders('$aact_key'), { access_token: '$aact_key' });
    const paths: string[] = [];
    await asaasApi.readCharge(
      'pay_1',
      async (path) => {
        paths.push(path);
        return asaasPayment();
      },
      {},
    );
    assert.deepEqual(paths, ['/v3/payments/pay_1']);
  });
});

// imobanco/zoop-wrapper examples/data/cancel_transaction.json, trimmed.
const zoopVoided = {
  id: 'e74786548f58452d9a62ee4d53ba0f87',
  resource: 'transaction',
  status: 'canceled',
  amount: '5.00',
  original_amount: '5.00',
  currency: 'BRL',
  payment_type: 'credit',
  gateway_authorizer: 'cielo',
  on_behalf_of: '25037b2978b14e7fa5b902d9322e8426',
  refunded: false,
  voided: true,
  captured: true,
  created_at: '2020-06-15T21:09:43+00:00',
  voided_at: '2020-06-15T21:10:09+00:00',
  history: [{ operation_type: 'void', status: 'succeeded', amount: '5.00', created_at: '2020-06-15 21:10:09' }],
};

describe('zoop: GET /v1/marketplaces/{mid}/transactions/{id} → canonical state', () => {
  test('a captured card transaction that was voided → refunded; decimal strings in cents', () => {
    assert.deepEqual(mapZoopTransaction(zoopVoided), {
      chargeId: 'e74786548f58452d9a62ee4d53ba0f87',
      status: 'refunded',
      amount: 500,
      amountRefunded: 500,
      currency: 'BRL',
    });
  });

  test('succeeded → paid (partially_refunded once amount drops below original_amount); failed; pre_authorized → authorized', () => {
    assert.equal(mapZoopTransaction({ ...zoopVoided, status: 'succeeded', voided: false }).status, 'paid');
    const partial = mapZoopTransaction({ ...zoopVoided, status: 'succeeded', voided: false, amount: '3.00' });
    assert.equal(partial.status, 'partially_refunded');
    assert.equal(partial.amountRefunded, 200);
    assert.equal(mapZoopTransaction({ ...zoopVoided, status: 'failed', voided: false, captured: true, payment_type: 'boleto' }).status, 'failed');
    assert.equal(mapZoopTransaction({ ...zoopVoided, status: 'pre_authorized', voided: false, captured: false }).status, 'authorized');
    assert.equal(mapZoopTransaction({ ...zoopVoided, status: 'canceled', voided: true, captured: false }).status, 'canceled');
    assert.equal(mapZoopTransaction({ ...zoopVoided, status: 'charged_back', voided: false }).status, 'charged_back');
  });

  test('a transaction without amount and original_amount as decimals is a shape error, never read as nothing refunded', () => {
    const succeeded = { ...zoopVoided, status: 'succeeded', voided: false };
    // Without original_amount, the remaining amount stood for it: a partially refunded transaction said paid.
    const { original_amount: _, ...withoutOriginal } = { ...succeeded, amount: '3.00' };
    assert.throws(() => mapZoopTransaction(withoutOriginal), GatewayResponseShapeError);
    assert.throws(() => mapZoopTransaction({ ...succeeded, amount: '3.00', original_amount: null }), GatewayResponseShapeError);
    assert.throws(() => mapZoopTransaction({ ...succeeded, amount: '3.00', original_amount: 'cinco' }), GatewayResponseShapeError);
    // Without amount, nothing counted as refunded.
    const { amount: __, ...withoutAmount } = succeeded;
    assert.throws(() => mapZoopTransaction(withoutAmount), GatewayResponseShapeError);
    assert.throws(() => mapZoopTransaction({ ...succeeded, amount: '3,00' }), GatewayResponseShapeError);
    assert.throws(() => mapZoopTransaction({ ...succeeded, amount: '-3.00' }), GatewayResponseShapeError);
  });

  test('the path carries the marketplace id; Basic auth with the key as user name', async () => {
    const paths: string[] = [];
    await zoopApi.readCharge(
      'e747',
      async (path) => {
        paths.push(path);
        return zoopVoided;
      },
      { marketplaceId: 'd77c2258b51d49269191502695f939f4' },
    );
    assert.deepEqual(paths, ['/v1/marketplaces/d77c2258b51d49269191502695f939f4/transactions/e747']);
    assert.deepEqual(zoopApi.authHeaders('zpk_test_abc'), { authorization: `Basic ${Buffer.from('zpk_test_abc:').toString('base64')}` });
  });
});

function mpPayment(overrides: Record<string, unknown> = {}) {
  return {
    id: 1316836507,
    date_created: '2024-06-12T16:45:03.000-04:00',
    date_approved: '2024-06-12T16:45:04.000-04:00',
    date_last_updated: '2024-06-12T16:45:04.000-04:00',
    payment_method_id: 'pix',
    payment_type_id: 'bank_transfer',
    status: 'approved',
    status_detail: 'accredited',
    currency_id: 'BRL',
    transaction_amount: 150.5,
    transaction_amount_refunded: 0,
    captured: true,
    refunds: [],
    ...overrides,
  };
}

describe('mercadopago: GET /v1/payments/{id} → canonical state', () => {
  test('approved → paid; the numeric id becomes a string; decimals in cents', () => {
    assert.deepEqual(mapMercadoPagoPayment(mpPayment()), { chargeId: '1316836507', status: 'paid', amount: 15050, amountRefunded: 0, currency: 'BRL' });
  });

  test('approved with transaction_amount_refunded → partially_refunded; refunded → refunded', () => {
    const partial = mapMercadoPagoPayment(mpPayment({ status_detail: 'partially_refunded', transaction_amount_refunded: 50.25 }));
    assert.equal(partial.status, 'partially_refunded');
    assert.equal(partial.amountRefunded, 5025);
    const refunded = mapMercadoPagoPayment(mpPayment({ status: 'refunded', status_detail: 'refunded', transaction_amount_refunded: 150.5 }));
    assert.equal(refunded.status, 'refunded');
    assert.equal(refunded.amountRefunded, 15050);
  });

  test('a payment without transaction_amount / transaction_amount_refunded as decimals is a shape error, never read as nothing refunded', () => {
    // Read as 0 refunded, a partially refunded payment's snapshot said paid (a snapshot is the truth).
    const { transaction_amount_refunded: _, ...withoutRefunded } = mpPayment({ status_detail: 'partially_refunded', transaction_amount_refunded: 50.25 });
    assert.throws(() => mapMercadoPagoPayment(withoutRefunded), GatewayResponseShapeError);
    assert.throws(() => mapMercadoPagoPayment(mpPayment({ transaction_amount_refunded: null })), GatewayResponseShapeError);
    assert.throws(() => mapMercadoPagoPayment(mpPayment({ transaction_amount_refunded: 'abc' })), GatewayResponseShapeError);
    assert.throws(() => mapMercadoPagoPayment(mpPayment({ transaction_amount_refunded: -5 })), GatewayResponseShapeError);
    // Without the amount, any refund was read as the whole of it (refunded).
    const { transaction_amount: __, ...withoutAmount } = mpPayment({ transaction_amount_refunded: 50.25 });
    assert.throws(() => mapMercadoPagoPayment(withoutAmount), GatewayResponseShapeError);
    assert.throws(() => mapMercadoPagoPayment(mpPayment({ transaction_amount: 150.505 })), GatewayResponseShapeError);
    // Whole-unit amounts (CLP, COP) are well formed, in each currency's ISO 4217 minor units.
    assert.equal(mapMercadoPagoPayment(mpPayment({ transaction_amount: 3500, transaction_amount_refunded: 0, currency_id: 'CLP' })).amount, 3500);
    assert.equal(mapMercadoPagoPayment(mpPayment({ transaction_amount: 3500, transaction_amount_refunded: 0, currency_id: 'COP' })).amount, 350000);
  });

  test('charged_back follows status_detail: in_process → disputed (open), reimbursed → the refund view (the seller won), settled → charged_back', () => {
    // Mercado Pago's "Get payment status" table: in_process "the payment is in process due to the
    // payer disowning it", reimbursed "the money was reimbursed after a chargeback process",
    // settled "the money was retained after a chargeback process".
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'charged_back', status_detail: 'in_process' })).status, 'disputed');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'charged_back', status_detail: 'reimbursed' })).status, 'paid');
    const partly = mapMercadoPagoPayment(mpPayment({ status: 'charged_back', status_detail: 'reimbursed', transaction_amount_refunded: 50.25 }));
    assert.deepEqual([partly.status, partly.amountRefunded], ['partially_refunded', 5025]);
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'charged_back', status_detail: 'settled' })).status, 'charged_back');
    assert.equal(
      mapMercadoPagoPayment(mpPayment({ status: 'charged_back', status_detail: 'something_new' })).status,
      'charged_back',
      'an unknown detail reads as before: lost',
    );
  });

  test("a production answer an integrator published (charged_back / reimbursed, 35.91 BRL: 'charged-back by the buyer, but the seller won the dispute') reads paid", () => {
    // From a Mercado Pago integration's notes on GitHub ("Charged-back > Reimbursed"), abridged to
    // the payment's own fields; the payer's and card holder's personal data are left out.
    const published = {
      captured: true,
      currency_id: 'BRL',
      date_approved: '2025-12-22T06:30:58.000-04:00',
      date_created: '2025-12-22T06:30:55.000-04:00',
      date_last_updated: '2026-01-06T10:55:54.000-04:00',
      fee_details: [{ amount: 1.79, fee_payer: 'collector', type: 'mercadopago_fee' }],
      id: 138982880892,
      installments: 1,
      live_mode: true,
      money_release_date: '2025-12-22T06:30:58.000-04:00',
      money_release_status: 'released',
      operation_type: 'regular_payment',
      payment_method_id: 'master',
      payment_type_id: 'credit_card',
      processing_mode: 'aggregator',
      refunds: [],
      status: 'charged_back',
      status_detail: 'reimbursed',
      tags: ['release_advance_by_mc'],
      transaction_amount: 35.91,
      transaction_amount_refunded: 0,
      transaction_details: { installment_amount: 35.91, net_received_amount: 34.12, overpaid_amount: 0, total_paid_amount: 35.91 },
    };
    assert.deepEqual(mapMercadoPagoPayment(published), { chargeId: '138982880892', status: 'paid', amount: 3591, amountRefunded: 0, currency: 'BRL' });
  });

  test('pending/in_process → pending, authorized (capture=false) → authorized, in_mediation → disputed, rejected → failed, cancelled → canceled, charged_back', () => {
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'pending', status_detail: 'pending_waiting_transfer' })).status, 'pending');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'in_process', status_detail: 'pending_contingency' })).status, 'pending');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'authorized', status_detail: 'pending_capture', captured: false })).status, 'authorized');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'in_mediation' })).status, 'disputed');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'rejected', status_detail: 'cc_rejected_insufficient_amount' })).status, 'failed');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'cancelled', status_detail: 'expired' })).status, 'canceled');
    assert.equal(mapMercadoPagoPayment(mpPayment({ status: 'charged_back', status_detail: 'settled' })).status, 'charged_back');
  });
});
