import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { shopifyDriver } from '../../../src/gateways/shopify/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

// D5: Shopify's algorithm (base64 HMAC-SHA256 of the raw body) on a body with an id past 2^53;
// openssl and Python agree on the value.
const D5 = { secret: 'hush', body: '{"id":820982911946154508,"email":"jon@example.com"}', signature: 'D0UMXmhjwBRi4y66TmhJrDlhQABD7zI2fm3p6/QLMo8=' };
const driver = createDriver(shopifyDriver, { secrets: [D5.secret] });
const headers = {
  'x-shopify-topic': 'orders/paid',
  'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
  'x-shopify-triggered-at': '2024-08-20T12:00:00.123456789Z',
};

describe('shopify: signatures', () => {
  test('D5 verifies', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body, { ...headers, 'x-shopify-hmac-sha256': D5.signature })), 'ok');
  });
  test('the events-webhook header name (shopify-hmac-sha256) is read too', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body, { 'shopify-hmac-sha256': D5.signature })), 'ok');
  });
  test('a wrong secret (equal-length base64) → signature_mismatch', async () => {
    const wrong = createHmac('sha256', 'not-hush').update(D5.body).digest('base64');
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body, { 'x-shopify-hmac-sha256': wrong })), 'signature_mismatch');
  });
  test('one byte of the body changed → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body.replace('jon', 'jan'), { 'x-shopify-hmac-sha256': D5.signature })), 'signature_mismatch');
  });
  test('any of two secrets matches during the hour a rotation takes', async () => {
    const rotating = createDriver(shopifyDriver, { secrets: ['new-client-secret', D5.secret] });
    assert.equal(await verifyOutcome(rotating, webhookRequest(D5.body, { 'x-shopify-hmac-sha256': D5.signature })), 'ok');
  });
  test('a missing header → signature_missing; a hex digest or garbage → signature_malformed', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body)), 'signature_missing');
    const hex = createHmac('sha256', D5.secret).update(D5.body).digest('hex');
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body, { 'x-shopify-hmac-sha256': hex })), 'signature_malformed');
    assert.equal(await verifyOutcome(driver, webhookRequest(D5.body, { 'x-shopify-hmac-sha256': 'this-is-garbage' })), 'signature_malformed');
  });
});

describe('shopify: parsing', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  test('an id past 2^53 is kept as its exact digits, in the resource and in the payload', () => {
    const event = driver.parse(webhookRequest(D5.body, headers), now);
    assert.equal(event.resourceId, '820982911946154508');
    assert.deepEqual(event.payload, { id: '820982911946154508', email: 'jon@example.com' });
    assert.equal(event.eventId, headers['x-shopify-webhook-id']);
    assert.equal(event.eventType, 'orders/paid');
    assert.equal(event.occurredAt.toISOString(), '2024-08-20T12:00:00.123Z');
    assert.equal(driver.toPaymentFact({ provider: 'shopify', ...event, payloadLossy: false }), null);
  });
  test('X-Shopify-Event-Id wins over the webhook id; admin_graphql_api_id over the numeric id', () => {
    const body = '{"id":820982911946154508,"admin_graphql_api_id":"gid://shopify/Order/820982911946154508"}';
    const event = driver.parse(webhookRequest(body, { ...headers, 'x-shopify-event-id': '98880550-7158-44d4-b7cd-2c97c8a091b5' }), now);
    assert.equal(event.eventId, '98880550-7158-44d4-b7cd-2c97c8a091b5');
    assert.equal(event.resourceId, 'gid://shopify/Order/820982911946154508');
  });
  test('without Triggered-At, the receipt time', () => {
    const { 'x-shopify-triggered-at': _, ...rest } = headers;
    assert.equal(driver.parse(webhookRequest('{"id":1}', rest), now).occurredAt, now);
  });
  test('no topic or webhook id → malformed_payload', () => {
    assert.equal(
      errorCode(() => driver.parse(webhookRequest('{"id":1}'), now)),
      'malformed_payload',
    );
  });
});
