import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { asaasDriver } from '../../../src/gateways/asaas/webhook-driver.ts';
import type { StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

// Asaas sends a static token and no signature: there is no vector to publish, only the token.
const TOKEN = 'asaas-webhook-token-0123456789abcdef';
const driver = createDriver(asaasDriver, { secrets: [TOKEN] });
const now = new Date('2026-06-12T20:00:00Z');

// The documented example payload (docs.asaas.com, "Receive Asaas events").
const received = JSON.stringify({
  id: 'evt_05b708f961d739ea7eba7e4db318f621&368604920',
  event: 'PAYMENT_RECEIVED',
  dateCreated: '2024-06-12 16:45:03',
  payment: {
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
    deleted: false,
  },
});

function stored(body: string): StoredEvent {
  return { provider: 'asaas', ...driver.parse(webhookRequest(body), now), payloadLossy: false };
}

function paymentEvent(event: string, payment: Record<string, unknown> = {}) {
  return JSON.stringify({
    id: `evt_x&${event}`,
    event,
    dateCreated: '2024-06-12 16:45:03',
    payment: { object: 'payment', id: 'pay_1', value: 100.0, status: 'X', ...payment },
  });
}

describe('asaas: the access token', () => {
  test('the configured token verifies', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(received, { 'asaas-access-token': TOKEN })), 'ok');
  });
  test('a wrong token, or the token minus its last byte → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(received, { 'asaas-access-token': 'x'.repeat(TOKEN.length) })), 'signature_mismatch');
    assert.equal(await verifyOutcome(driver, webhookRequest(received, { 'asaas-access-token': TOKEN.slice(0, -1) })), 'signature_mismatch');
  });
  test('no token header → signature_missing', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(received)), 'signature_missing');
  });
  test('rotation: the previous token still verifies while both are configured', async () => {
    const rotating = createDriver(asaasDriver, { secrets: ['the-new-asaas-token-0123456789abcdef', TOKEN] });
    assert.equal(await verifyOutcome(rotating, webhookRequest(received, { 'asaas-access-token': TOKEN })), 'ok');
  });
});

describe('asaas: parsing', () => {
  test('the documented example: id with &, PAYMENT_RECEIVED, payment.id, dateCreated at -03:00', () => {
    const event = driver.parse(webhookRequest(received), now);
    assert.equal(event.eventId, 'evt_05b708f961d739ea7eba7e4db318f621&368604920');
    assert.equal(event.eventType, 'PAYMENT_RECEIVED');
    assert.equal(event.resourceId, 'pay_080225913252');
    assert.equal(event.occurredAt.toISOString(), '2024-06-12T19:45:03.000Z');
  });

  test('other families: the entity is under the key named after the event', () => {
    const transfer = driver.parse(webhookRequest('{"id":"evt_t&1","event":"TRANSFER_DONE","transfer":{"id":"tra_1","status":"DONE"}}'), now);
    assert.equal(transfer.resourceId, 'tra_1');
    const recharge = driver.parse(webhookRequest('{"id":"evt_r&1","event":"MOBILE_PHONE_RECHARGE_PENDING","mobilePhoneRecharge":{"id":"rec_1"}}'), now);
    assert.equal(recharge.resourceId, 'rec_1');
  });

  test('an old payload without id gets a derived key, stable across resends; without dateCreated, the receipt time', () => {
    const body = '{"event":"PAYMENT_CONFIRMED","payment":{"id":"pay_2","status":"CONFIRMED","value":10}}';
    const first = driver.parse(webhookRequest(body), now);
    const later = driver.parse(webhookRequest(body), new Date(now.getTime() + 3_600_000));
    assert.match(first.eventId, /^derived:/);
    assert.equal(later.eventId, first.eventId);
    assert.equal(first.occurredAt, now);
  });

  test('no event, or an unreadable dateCreated → malformed_payload', () => {
    assert.equal(
      errorCode(() => driver.parse(webhookRequest('{"payment":{"id":"pay_1"}}'), now)),
      'malformed_payload',
    );
    assert.equal(
      errorCode(() => driver.parse(webhookRequest('{"event":"PAYMENT_CREATED","dateCreated":"12/06/2024"}'), now)),
      'malformed_payload',
    );
  });
});

describe('asaas: canonical payment facts', () => {
  test('PAYMENT_RECEIVED with value 100.00 → paid, 10000 minor units in BRL', () => {
    assert.deepEqual(driver.toPaymentFact(stored(received)), {
      kind: 'payment.paid',
      chargeId: 'pay_080225913252',
      status: 'paid',
      occurredAt: new Date('2024-06-12T19:45:03Z'),
      amount: 10000,
      amountRefunded: undefined,
      currency: 'BRL',
    });
  });

  test('decimals convert without float error (4.35 * 100 is 434.99999999999994 in floating point)', () => {
    for (const [value, minor] of [
      [4.35, 435],
      [0.29, 29],
      [1.13, 113],
      [19.99, 1999],
      [100, 10000],
      [0.1, 10],
    ] as const) {
      assert.equal(driver.toPaymentFact(stored(paymentEvent('PAYMENT_CONFIRMED', { value })))?.amount, minor, String(value));
    }
  });

  test('every mapped event', () => {
    const expected: Record<string, string | null> = {
      PAYMENT_CREATED: 'pending',
      PAYMENT_AUTHORIZED: 'authorized',
      PAYMENT_OVERDUE: 'pending',
      PAYMENT_RESTORED: 'pending',
      PAYMENT_CONFIRMED: 'paid',
      PAYMENT_RECEIVED: 'paid',
      PAYMENT_AWAITING_CHARGEBACK_REVERSAL: 'paid',
      PAYMENT_CREDIT_CARD_CAPTURE_REFUSED: 'failed',
      PAYMENT_REPROVED_BY_RISK_ANALYSIS: 'failed',
      PAYMENT_DELETED: 'canceled',
      PAYMENT_REFUNDED: 'refunded',
      PAYMENT_PARTIALLY_REFUNDED: 'partially_refunded',
      PAYMENT_CHARGEBACK_REQUESTED: 'disputed',
      PAYMENT_CHARGEBACK_DISPUTE: 'disputed',
      PAYMENT_UPDATED: null,
      PAYMENT_REFUND_IN_PROGRESS: null,
      PAYMENT_BANK_SLIP_VIEWED: null,
      PAYMENT_ANTICIPATED: null,
    };
    for (const [event, status] of Object.entries(expected)) {
      assert.equal(driver.toPaymentFact(stored(paymentEvent(event)))?.status ?? null, status, event);
    }
  });

  test('refunds: a full refund refunds the whole value; a partial one sums the listed refunds', () => {
    assert.equal(driver.toPaymentFact(stored(paymentEvent('PAYMENT_REFUNDED', { value: 49.9 })))?.amountRefunded, 4990);
    const partial = paymentEvent('PAYMENT_PARTIALLY_REFUNDED', {
      value: 100,
      refunds: [
        { value: 10.1, status: 'DONE' },
        { value: 5, status: 'CANCELLED' },
        { value: 0.2, status: 'PENDING' },
      ],
    });
    assert.equal(driver.toPaymentFact(stored(partial))?.amountRefunded, 1030);
  });

  test('a released pre-authorization (PAYMENT_REFUNDED of a charge never captured: no confirmedDate nor paymentDate) is canceled, nothing refunded', () => {
    const released = driver.toPaymentFact(
      stored(paymentEvent('PAYMENT_REFUNDED', { value: 49.9, status: 'REFUNDED', confirmedDate: null, paymentDate: null })),
    );
    assert.deepEqual([released?.status, released?.amountRefunded], ['canceled', undefined]);
    const refunded = driver.toPaymentFact(
      stored(paymentEvent('PAYMENT_REFUNDED', { value: 49.9, status: 'REFUNDED', confirmedDate: '2024-06-12', paymentDate: '2024-06-12' })),
    );
    assert.deepEqual([refunded?.status, refunded?.amountRefunded], ['refunded', 4990]);
  });

  test('a non-payment family has no payment fact', () => {
    assert.equal(driver.toPaymentFact(stored('{"id":"evt_t&1","event":"TRANSFER_DONE","transfer":{"id":"tra_1"}}')), null);
  });
});
