import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mapAsaasPayment } from '../../src/gateways/asaas/api.ts';
import { asaasDriver } from '../../src/gateways/asaas/webhook-driver.ts';
import { mapMercadoPagoPayment } from '../../src/gateways/mercadopago/api.ts';
import { GatewayResponseShapeError } from '../../src/gateways/shared/gateway-api.ts';
import type { ProviderDriver } from '../../src/gateways/shared/webhook-driver.ts';
import { mapStripeCharge, mapStripePaymentIntent } from '../../src/gateways/stripe/api.ts';
import { stripeDriver } from '../../src/gateways/stripe/webhook-driver.ts';
import { mapZoopTransaction } from '../../src/gateways/zoop/api.ts';
import { zoopDriver } from '../../src/gateways/zoop/webhook-driver.ts';
import { fixtureCharge, fixtureEventBody } from '../support/stripe-objects.ts';
import { createDriver, webhookRequest } from './request.ts';

// `amount` in every payment event is in the currency's ISO 4217 minor units (docs/amounts.md):
// exponent 0 for CLP and JPY, 3 for BHD and KWD, 2 otherwise. Each gateway that sends decimals is
// read with its currency's exponent, and Stripe's integers are put on ISO's scale where Stripe's
// own differs (MGA, ISK). Shapes are each gateway's published ones (see the fixtures named).
const now = new Date('2026-06-12T20:00:00Z');

/** The fact a driver makes of a body, parsed as the receiver parses it. */
function factOf(driver: ProviderDriver, provider: string, body: string) {
  return driver.toPaymentFact({ provider, ...driver.parse(webhookRequest(body), now), payloadLossy: false });
}

// Mercado Pago's webhooks are notices without amounts: its amounts come from GET /v1/payments/{id}
// (sdk-nodejs PaymentResponse: transaction_amount and transaction_amount_refunded in the currency unit).
const mpPayment = (currency_id: string, transaction_amount: unknown, transaction_amount_refunded: unknown = 0) => ({
  id: 1316836507,
  status: 'approved',
  status_detail: 'accredited',
  currency_id,
  transaction_amount,
  transaction_amount_refunded,
  captured: true,
});

describe("Mercado Pago (GET /v1/payments/{id}): transaction_amount in the currency's minor units", () => {
  test('exponent 2: 150.5 BRL is 15050; 0.29 is 29, not 28', () => {
    assert.deepEqual(mapMercadoPagoPayment(mpPayment('BRL', 150.5)), {
      chargeId: '1316836507',
      status: 'paid',
      amount: 15050,
      amountRefunded: 0,
      currency: 'BRL',
    });
    assert.equal(mapMercadoPagoPayment(mpPayment('ARS', 0.29)).amount, 29);
    assert.equal(mapMercadoPagoPayment(mpPayment('COP', 35000)).amount, 3500000, 'COP is sent in whole pesos; ISO counts it in hundredths');
  });

  test('exponent 0: 1500 CLP is 1500 (was 150000), a partial refund of 500 is 500', () => {
    const payment = mapMercadoPagoPayment({ ...mpPayment('CLP', 1500, 500), status_detail: 'partially_refunded' });
    assert.deepEqual(payment, { chargeId: '1316836507', status: 'partially_refunded', amount: 1500, amountRefunded: 500, currency: 'CLP' });
  });

  test('exponent 3: 12.345 KWD is 12345', () => {
    assert.equal(mapMercadoPagoPayment(mpPayment('KWD', 12.345)).amount, 12345);
  });

  test('finer than the currency allows is a shape error, never rounded: 1500.5 CLP, 1.2345 BHD', () => {
    assert.throws(() => mapMercadoPagoPayment(mpPayment('CLP', 1500.5)), GatewayResponseShapeError);
    assert.throws(() => mapMercadoPagoPayment(mpPayment('BHD', 1.2345)), GatewayResponseShapeError);
  });
});

// imobanco/zoop-wrapper examples/data/events/transaction_succeeded.json and retrieve_transaction.json, abridged.
const zoop = createDriver(zoopDriver);
const zoopEvent = (currency: string, amount: string) =>
  JSON.stringify({
    id: 'cf4679634d4e4b6dbc9fa8990c8f01f9',
    type: 'transaction.succeeded',
    resource: 'event',
    payload: {
      object: { id: '32df0dd9c57143ef8cc46924f4ba9e98', resource: 'transaction', status: 'succeeded', amount, currency, captured: true, voided: false },
    },
    created_at: '2020-07-06T14:01:51+0000',
  });
const zoopTransaction = (currency: string, amount: string) => ({
  id: 'e74786548f58452d9a62ee4d53ba0f87',
  resource: 'transaction',
  status: 'succeeded',
  amount,
  original_amount: amount,
  currency,
  captured: true,
  voided: false,
});

describe("Zoop (webhook and GET transaction): decimal strings in the currency's minor units", () => {
  test('exponent 2: "1484.34" BRL is 148434', () => {
    assert.equal(factOf(zoop, 'zoop', zoopEvent('BRL', '1484.34'))?.amount, 148434);
    assert.equal(mapZoopTransaction(zoopTransaction('BRL', '1484.34')).amount, 148434);
  });

  test('exponent 0: "1500.00" JPY is 1500', () => {
    assert.equal(factOf(zoop, 'zoop', zoopEvent('JPY', '1500.00'))?.amount, 1500);
    assert.equal(mapZoopTransaction(zoopTransaction('JPY', '1500.00')).amount, 1500);
  });

  test('exponent 3: "5.125" BHD is 5125', () => {
    assert.equal(factOf(zoop, 'zoop', zoopEvent('BHD', '5.125'))?.amount, 5125);
    assert.equal(mapZoopTransaction(zoopTransaction('BHD', '5.125')).amount, 5125);
  });

  test('finer than the currency allows: the webhook fact says no amount, the API answer is a shape error', () => {
    assert.equal(factOf(zoop, 'zoop', zoopEvent('JPY', '1500.50'))?.amount, undefined);
    assert.throws(() => mapZoopTransaction(zoopTransaction('JPY', '1500.50')), GatewayResponseShapeError);
  });
});

// Asaas charges only in reais: its payment (docs.asaas.com, "Receive Asaas events") has no currency
// field, so BRL's exponent is the only one it can need.
const asaas = createDriver(asaasDriver);
const asaasPayment = (value: unknown) => ({ object: 'payment', id: 'pay_080225913252', value, status: 'RECEIVED', billingType: 'PIX', deleted: false });

describe('Asaas (webhook and GET payment): value in centavos', () => {
  test('exponent 2: 100.0 is 10000, 0.29 is 29', () => {
    const event = (value: unknown) =>
      JSON.stringify({
        id: 'evt_05b708f961d739ea7eba7e4db318f621&368604920',
        event: 'PAYMENT_RECEIVED',
        dateCreated: '2024-06-12 16:45:03',
        payment: asaasPayment(value),
      });
    assert.deepEqual(
      [factOf(asaas, 'asaas', event(100.0))?.amount, factOf(asaas, 'asaas', event(0.29))?.amount, factOf(asaas, 'asaas', event(0.29))?.currency],
      [10000, 29, 'BRL'],
    );
    assert.equal(mapAsaasPayment(asaasPayment(0.29)).amount, 29);
  });
});

// Stripe sends integers on its own scale (docs.stripe.com/currencies); the official fixtures
// (stripe/openapi) carry them.
const stripe = createDriver(stripeDriver);
const stripeChargeEvent = (currency: string, amount: number, amountRefunded = 0) =>
  fixtureEventBody(
    'evt_amounts',
    amountRefunded > 0 ? 'charge.refunded' : 'charge.succeeded',
    1_781_294_400,
    fixtureCharge({
      id: 'ch_amounts',
      currency,
      amount,
      amount_captured: amount,
      amount_refunded: amountRefunded,
      captured: true,
      refunded: amountRefunded === amount,
      status: 'succeeded',
    }),
  );
const stripeFact = (currency: string, amount: number, amountRefunded = 0) => factOf(stripe, 'stripe', stripeChargeEvent(currency, amount, amountRefunded));
const stripeCharge = (currency: string, amount: number) =>
  fixtureCharge({ id: 'ch_amounts', currency, amount, amount_captured: amount, amount_refunded: 0, captured: true, status: 'succeeded', disputed: false });

describe("Stripe (webhook and GET charge): its integers, on ISO 4217's scale", () => {
  test('exponent 2: 2000 brl is 2000; HUF and TWD charges are two-decimal at Stripe too', () => {
    for (const currency of ['brl', 'huf', 'twd']) assert.equal(stripeFact(currency, 2000)?.amount, 2000, currency);
    assert.equal(mapStripeCharge(stripeCharge('huf', 2000)).amount, 2000);
  });

  test('exponent 0: 500 jpy and 1500 clp are as sent; ISK, two-decimal at Stripe, is divided by 100', () => {
    assert.equal(stripeFact('jpy', 500)?.amount, 500);
    assert.equal(stripeFact('clp', 1500)?.amount, 1500);
    assert.deepEqual([stripeFact('isk', 4000, 1000)?.amount, stripeFact('isk', 4000, 1000)?.amountRefunded], [40, 10]);
    assert.equal(mapStripeCharge(stripeCharge('isk', 4000)).amount, 40);
  });

  test('exponent 3: 12340 kwd is 12340 (Stripe counts thousandths too)', () => {
    assert.equal(stripeFact('kwd', 12340)?.amount, 12340);
    assert.equal(mapStripeCharge(stripeCharge('bhd', 5120)).amount, 5120);
  });

  test('MGA, zero-decimal at Stripe, two-decimal in ISO 4217: 500 ariary is 50000', () => {
    assert.equal(stripeFact('mga', 500)?.amount, 50000);
    assert.equal(mapStripePaymentIntent({ id: 'pi_1', status: 'requires_capture', amount: 500, currency: 'mga', latest_charge: null }).amount, 50000);
  });

  test('a fractional ISK króna (4010, refused by Stripe since 2023) has no ISO amount: the webhook fact says none, the API answer is a shape error', () => {
    assert.equal(stripeFact('isk', 4010)?.amount, undefined);
    assert.throws(() => mapStripeCharge(stripeCharge('isk', 4010)), GatewayResponseShapeError);
  });
});
