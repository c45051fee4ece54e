import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { MalformedPayloadError } from '../../src/errors.ts';
import { asaasDriver } from '../../src/gateways/asaas/webhook-driver.ts';
import { hmacDriver } from '../../src/gateways/hmac/webhook-driver.ts';
import { validateEnvelope } from '../../src/gateways/shared/json-body.ts';
import { mercadoPagoDriver } from '../../src/gateways/mercadopago/webhook-driver.ts';
import { pagarmeLegacyDriver } from '../../src/gateways/pagarme-legacy/webhook-driver.ts';
import { pagarmeDriver } from '../../src/gateways/pagarme/webhook-driver.ts';
import { zoopDriver } from '../../src/gateways/zoop/webhook-driver.ts';
import { createDriver, webhookRequest } from './request.ts';

// A 400 malformed_payload goes back to the sender and into the service's log line for the refusal.
// Its message says which field was wrong and what was expected, never what was sent: a value can
// be megabytes long, and it is the sender's text, not ours, in our answer and our logs.
const SENT = `sentvalue${'x'.repeat(10_000)}`;
const LONGEST_MESSAGE = 400;
const now = new Date('2026-06-01T00:00:00Z');

function malformedMessage(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof MalformedPayloadError) return error.message;
    throw error;
  }
  return assert.fail('the body was accepted');
}

function assertQuotesNothingSent(message: string): void {
  assert.ok(!message.includes('sentvalue'), `the message quotes the sent value: ${message.slice(0, 200)}…`);
  assert.ok(message.length <= LONGEST_MESSAGE, `the message is ${message.length} characters long`);
}

describe('malformed_payload messages name the field, never the value sent', () => {
  test('asaas: an unreadable dateCreated', () => {
    const driver = createDriver(asaasDriver, { secrets: ['asaas-webhook-token-0123456789abcdef'] });
    const body = JSON.stringify({ id: 'evt_1', event: 'PAYMENT_CREATED', dateCreated: SENT, payment: { object: 'payment', id: 'pay_1', value: 1 } });
    assertQuotesNothingSent(malformedMessage(() => driver.parse(webhookRequest(body), now)));
  });

  test('mercadopago: an unreadable date_created', () => {
    const driver = createDriver(mercadoPagoDriver, { secrets: ['mp-secret'] });
    const body = JSON.stringify({ id: 1, action: 'payment.updated', type: 'payment', data: { id: '123456' }, date_created: SENT });
    assertQuotesNothingSent(malformedMessage(() => driver.parse(webhookRequest(body, {}, 'data.id=123456'), now)));
  });

  test('pagarme: an unreadable created_at', () => {
    const driver = createDriver(pagarmeDriver, { options: { jwksUrl: 'https://127.0.0.1/unused' } });
    const body = JSON.stringify({ id: 'hook_1', type: 'charge.paid', created_at: SENT, data: { id: 'ch_1', status: 'paid' } });
    assertQuotesNothingSent(malformedMessage(() => driver.parse(webhookRequest(body), now)));
  });

  test('pagarme legacy: an unreadable date_updated under an object name the sender chose', () => {
    const driver = createDriver(pagarmeLegacyDriver, { secrets: ['ak_test_legacy_postbacks'] });
    const body = new URLSearchParams({ id: '1', event: 'transaction_status_changed', object: SENT, [`${SENT}[date_updated]`]: 'yesterday' }).toString();
    assertQuotesNothingSent(malformedMessage(() => driver.parse(webhookRequest(body), now)));
  });

  test('zoop: an unreadable created_at', () => {
    const driver = createDriver(zoopDriver);
    const body = JSON.stringify({ id: 'evt_1', type: 'transaction.succeeded', resource: 'event', payload: { object: { id: 'tr_1' } }, created_at: SENT });
    assertQuotesNothingSent(malformedMessage(() => driver.parse(webhookRequest(body), now)));
  });

  test('the generic hmac driver: an unreadable time at occurredAtPath', () => {
    const driver = createDriver(hmacDriver, { secrets: ['s'], options: { header: 'x', typePath: 'type', occurredAtPath: 'at' } });
    assertQuotesNothingSent(malformedMessage(() => driver.parse(webhookRequest(JSON.stringify({ type: 't', at: SENT })), now)));
  });

  test("an envelope's failures: ten thousand of them make a short message that names the first", () => {
    const listed = z.object({ items: z.array(z.string()) });
    const message = malformedMessage(() => validateEnvelope({ items: Array.from({ length: 10_000 }, (_, i) => i) }, listed, 'test'));
    assertQuotesNothingSent(message);
    assert.match(message, /items\.0: .*9997 more/);
  });
});
