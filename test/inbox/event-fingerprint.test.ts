import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventFingerprint, eventMeaning, meaningDifferences } from '../../src/inbox/event-fingerprint.ts';
import { builtInDrivers } from '../../src/gateways/registry.ts';
import type { ProviderDriver, WebhookRequest } from '../../src/gateways/shared/webhook-driver.ts';
import { chargeEvent } from '../support/stripe.ts';
import { createDriver, webhookRequest } from '../gateways/request.ts';

// Each delivery is parsed at its own time, as the route does: a resend comes later than the first.
const FIRST_AT = new Date('2026-03-01T12:00:00Z');
const RESEND_AT = new Date('2026-03-01T13:30:00Z');
const OTHER_AT = new Date('2026-03-01T15:00:00Z');

interface ResendPair {
  driver: ProviderDriver;
  first: WebhookRequest;
  /** What the gateway sends again under the same id when nothing happened: counters and delivery data may change. */
  resend: WebhookRequest;
  /** The same id, saying something else. */
  other: WebhookRequest;
}

function fingerprintOf(driver: ProviderDriver, request: WebhookRequest, now: Date) {
  const event = driver.parse(request, now);
  return { eventId: event.eventId, fingerprint: eventFingerprint({ provider: 'p', ...event }, driver) };
}

const json = (value: unknown) => JSON.stringify(value);
const stripeEvent = (type: string, extra: Record<string, unknown> = {}, amountRefunded?: number) => ({
  ...JSON.parse(chargeEvent({ id: 'evt_1PqXyZ2eZvKYlo2C', type, chargeId: 'ch_3PqXyZ2eZvKYlo2C', created: 1_772_366_400, amountRefunded })),
  ...extra,
});

const asaas = (event: string, status: string, extra: Record<string, unknown> = {}) =>
  json({
    id: 'evt_05b708f961d739ea7eba7e4db318f621&368604920',
    event,
    dateCreated: '2024-06-12 16:45:03',
    payment: { object: 'payment', id: 'pay_080225913252', customer: 'cus_G7Dvo4iphUNk', value: 100.0, netValue: 98.01, billingType: 'PIX', status, ...extra },
  });
const pagarme = (type: string, extra: Record<string, unknown> = {}) =>
  json({
    id: 'hook_4w1y0JVsPsn06EWx',
    account: { id: 'acc_Z5P8OoyFgOI9r84q', name: 'Loja Exemplo' },
    type,
    created_at: '2025-01-01T04:15:39Z',
    data: { id: 'ch_GBnP26LF4FkyZvpm', amount: 150, paid_amount: 150, status: 'paid', currency: 'BRL', paid_at: '2025-01-01T04:15:39Z', ...extra },
  });
const zoop = (type: string, status: string) =>
  json({
    id: 'cf4679634d4e4b6dbc9fa8990c8f01f9',
    type,
    resource: 'event',
    created_at: '2020-07-06T14:01:51+0000',
    payload: { object: { id: '32df0dd9c57143ef8cc46924f4ba9e98', resource: 'transaction', status, amount: '1484.34', currency: 'BRL' } },
  });
const legacyPostback = (fields: Record<string, string> = {}) =>
  new URLSearchParams({
    id: '4240637',
    fingerprint: '9c3f286dc60b0c221796ae551271d1217c7abf6f',
    event: 'transaction_status_changed',
    current_status: 'paid',
    object: 'transaction',
    'transaction[status]': 'paid',
    'transaction[date_updated]': '2018-09-06T19:55:14.063Z',
    'transaction[amount]': '3100',
    'transaction[refunded_amount]': '0',
    'transaction[id]': '4240637',
    ...fields,
  }).toString();
const mercadoPago = (action: string) =>
  json({
    action,
    api_version: 'v1',
    data: { id: '123456' },
    date_created: '2026-06-27T10:04:58.396-03:00',
    id: 115029489371,
    live_mode: false,
    type: 'payment',
    user_id: 724484980,
  });
const github = (action: string, deliveryHeaders: Record<string, string> = {}) =>
  webhookRequest(json({ action, issue: { id: 1, number: 1347 }, repository: { id: 1296269, full_name: 'octocat/Hello-World' } }), {
    'x-github-event': 'issues',
    'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    ...deliveryHeaders,
  });
const shopify = (topic: string, body: Record<string, unknown> = {}) =>
  webhookRequest(json({ id: 450789469, email: 'jon@example.com', financial_status: 'paid', ...body }), {
    'x-shopify-topic': topic,
    'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
  });
const standard = (type: string, attemptSeconds: number) =>
  webhookRequest(json({ type, data: { id: '1f81eb52-5198-4599-803e-771906343485' } }), {
    'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
    'webhook-timestamp': String(attemptSeconds),
  });

const pairs: Record<string, ResendPair> = {
  'stripe (pending_webhooks and request change between resends)': {
    driver: createDriver(builtInDrivers.stripe!),
    first: webhookRequest(json(stripeEvent('charge.succeeded'))),
    resend: webhookRequest(json(stripeEvent('charge.succeeded', { pending_webhooks: 4, request: { id: 'req_AbCdEf123456', idempotency_key: 'a1b2' } }))),
    other: webhookRequest(json(stripeEvent('charge.refunded', {}, 2000))),
  },
  'stripe (a partial refund resent as a full one)': {
    driver: createDriver(builtInDrivers.stripe!),
    first: webhookRequest(json(stripeEvent('charge.refunded', {}, 500))),
    resend: webhookRequest(json(stripeEvent('charge.refunded', { pending_webhooks: 2 }, 500))),
    other: webhookRequest(json(stripeEvent('charge.refunded', {}, 2000))),
  },
  'asaas (a fee the payment shows may change; the event does not)': {
    driver: createDriver(builtInDrivers.asaas!, { secrets: ['token'] }),
    first: webhookRequest(asaas('PAYMENT_RECEIVED', 'RECEIVED')),
    resend: webhookRequest(asaas('PAYMENT_RECEIVED', 'RECEIVED', { netValue: 97.5 })),
    other: webhookRequest(asaas('PAYMENT_REFUNDED', 'REFUNDED')),
  },
  'pagarme (the account name is not the charge)': {
    driver: createDriver(builtInDrivers.pagarme!, { options: { jwksUrl: 'https://127.0.0.1/unused' } }),
    first: webhookRequest(pagarme('charge.paid')),
    resend: webhookRequest(pagarme('charge.paid').replace('Loja Exemplo', 'Loja Exemplo Ltda')),
    other: webhookRequest(pagarme('charge.refunded', { status: 'refunded' })),
  },
  'pagarme-legacy (derived key: same status and time, other refunded amount)': {
    driver: createDriver(builtInDrivers['pagarme-legacy']!, { secrets: ['ak_test'] }),
    first: webhookRequest(legacyPostback()),
    resend: webhookRequest(legacyPostback({ fingerprint: '0000286dc60b0c221796ae551271d1217c7abf6f' })),
    other: webhookRequest(legacyPostback({ 'transaction[refunded_amount]': '3100' })),
  },
  zoop: {
    driver: createDriver(builtInDrivers.zoop!),
    first: webhookRequest(zoop('transaction.succeeded', 'succeeded')),
    resend: webhookRequest(zoop('transaction.succeeded', 'succeeded').replace('"resource":"event",', '')),
    other: webhookRequest(zoop('transaction.failed', 'failed')),
  },
  'mercadopago (a thin notification: type, resource, time)': {
    driver: createDriver(builtInDrivers.mercadopago!, { secrets: ['s'] }),
    first: webhookRequest(mercadoPago('payment.updated')),
    resend: webhookRequest(mercadoPago('payment.updated').replace('"live_mode":false,', '')),
    other: webhookRequest(mercadoPago('payment.created')),
  },
  'github (no event time: each redelivery is received at another time)': {
    driver: createDriver(builtInDrivers.github!, { secrets: ['s'] }),
    first: github('opened'),
    resend: github('opened', { 'x-github-hook-installation-target-id': '79929171' }),
    other: github('closed'),
  },
  'shopify (no X-Shopify-Triggered-At: receipt time)': {
    driver: createDriver(builtInDrivers.shopify!, { secrets: ['s'] }),
    first: shopify('orders/paid'),
    resend: shopify('orders/paid', { note: 'resent' }),
    other: shopify('orders/cancelled'),
  },
  'standard-webhooks (no timestamp in the body: the header is the attempt time)': {
    driver: createDriver(builtInDrivers['standard-webhooks']!, { secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }),
    first: standard('contact.created', 1_772_366_400),
    resend: standard('contact.created', 1_772_370_000),
    other: standard('contact.deleted', 1_772_373_600),
  },
  'hmac (generic: id and type from the body, no time)': {
    driver: createDriver(builtInDrivers.hmac!, { secrets: ['s'], options: { header: 'x-signature', typePath: 'type', idPath: 'id' } }),
    first: webhookRequest(json({ id: 'e_1', type: 'order.paid', attempt: 1 })),
    resend: webhookRequest(json({ id: 'e_1', type: 'order.paid', attempt: 2 })),
    other: webhookRequest(json({ id: 'e_1', type: 'order.refunded', attempt: 1 })),
  },
  'token (generic)': {
    driver: createDriver(builtInDrivers.token!, { secrets: ['t'], options: { header: 'x-webhook-token', typePath: 'event', idPath: 'id' } }),
    first: webhookRequest(json({ id: 'n_1', event: 'invoice.paid' })),
    resend: webhookRequest(json({ event: 'invoice.paid', id: 'n_1' })),
    other: webhookRequest(json({ id: 'n_1', event: 'invoice.voided' })),
  },
};

describe('the fingerprint of what an event says, per driver', () => {
  test('every built-in driver has a resend pair here', () => {
    const covered = new Set(Object.values(pairs).map((pair) => pair.driver.name));
    assert.deepEqual([...covered].sort(), Object.keys(builtInDrivers).sort());
  });

  for (const [name, pair] of Object.entries(pairs)) {
    test(`${name}: a resend has the same fingerprint; the same id saying something else has another`, () => {
      const first = fingerprintOf(pair.driver, pair.first, FIRST_AT);
      const resend = fingerprintOf(pair.driver, pair.resend, RESEND_AT);
      const other = fingerprintOf(pair.driver, pair.other, OTHER_AT);
      assert.equal(resend.eventId, first.eventId, 'a resend keeps the id');
      assert.equal(other.eventId, first.eventId, 'the conflicting body has the same id');
      assert.equal(resend.fingerprint, first.fingerprint);
      assert.notEqual(other.fingerprint, first.fingerprint);
      assert.match(first.fingerprint, /^[0-9a-f]{64}$/);
    });
  }
});

describe('the meaning behind the fingerprint', () => {
  const stripe = createDriver(builtInDrivers.stripe!);
  const meaningOf = (body: unknown) => eventMeaning({ provider: 'stripe', ...stripe.parse(webhookRequest(json(body)), FIRST_AT) }, stripe);

  test('Stripe charge.succeeded: type, charge, canonical status, time and money', () => {
    assert.deepEqual(meaningOf(stripeEvent('charge.succeeded')), {
      eventType: 'charge.succeeded',
      resourceId: 'ch_3PqXyZ2eZvKYlo2C',
      status: 'paid',
      occurredAt: '2026-03-01T12:00:00.000Z',
      amount: 2000,
      amountRefunded: 0,
      currency: 'BRL',
    });
  });

  test('the differences name each field with the stored and the received value', () => {
    assert.deepEqual(meaningDifferences(meaningOf(stripeEvent('charge.refunded', {}, 500)), meaningOf(stripeEvent('charge.refunded', {}, 2000))), [
      { field: 'status', stored: 'partially_refunded', received: 'refunded' },
      { field: 'amountRefunded', stored: 500, received: 2000 },
    ]);
    assert.deepEqual(meaningDifferences(meaningOf(stripeEvent('charge.succeeded')), meaningOf(stripeEvent('charge.succeeded', { pending_webhooks: 9 }))), []);
  });

  test('a driver that throws while mapping, or none at all, leaves only type, resource and time', () => {
    const event = { provider: 'x', ...stripe.parse(webhookRequest(json(stripeEvent('charge.succeeded'))), FIRST_AT) };
    const throwing = {
      toPaymentFact: () => {
        throw new TypeError('cannot read amount');
      },
    };
    const expected = {
      eventType: 'charge.succeeded',
      resourceId: 'ch_3PqXyZ2eZvKYlo2C',
      status: null,
      occurredAt: '2026-03-01T12:00:00.000Z',
      amount: null,
      amountRefunded: null,
      currency: null,
    };
    assert.deepEqual(eventMeaning(event, throwing), expected);
    assert.deepEqual(eventMeaning(event, undefined), expected);
  });
});
