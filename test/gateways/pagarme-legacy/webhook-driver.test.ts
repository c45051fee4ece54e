import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { decodeBracketForm } from '../../../src/gateways/shared/form-body.ts';
import { pagarmeLegacyDriver } from '../../../src/gateways/pagarme-legacy/webhook-driver.ts';
import type { StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

const API_KEY = 'ak_test_legacy_postbacks';
const driver = createDriver(pagarmeLegacyDriver, { secrets: [API_KEY] });
const now = new Date('2026-01-01T00:00:00Z');

// A transaction_status_changed postback in the shape of pagarme-php's PostbackMock (abridged).
function postback(fields: Record<string, string> = {}): string {
  return new URLSearchParams({
    id: '4240637',
    fingerprint: '9c3f286dc60b0c221796ae551271d1217c7abf6f',
    event: 'transaction_status_changed',
    old_status: 'waiting_payment',
    desired_status: 'paid',
    current_status: 'paid',
    object: 'transaction',
    'transaction[object]': 'transaction',
    'transaction[status]': 'paid',
    'transaction[date_updated]': '2018-09-06T19:55:14.063Z',
    'transaction[amount]': '3100',
    'transaction[refunded_amount]': '0',
    'transaction[id]': '4240637',
    'transaction[phone][ddd]': '11',
    'transaction[items][0][id]': 'sku-1',
    'transaction[items][1][id]': 'sku-2',
    ...fields,
  }).toString();
}
const sha1 = (body: string, key = API_KEY) => createHmac('sha1', key).update(body).digest('hex');
const stored = (body: string): StoredEvent => ({ provider: 'pagarme-legacy', ...driver.parse(webhookRequest(body), now), payloadLossy: false });

describe('pagarme-legacy: published vectors', () => {
  test('V8 (pagarme-php): "sha1=<hex>" header', async () => {
    const v8 = createDriver(pagarmeLegacyDriver, { secrets: ['apiKey'] });
    assert.equal(
      await verifyOutcome(v8, webhookRequest('foo=bar&bar=baz&baz=foo', { 'x-hub-signature': 'sha1=38114af54396acbba342ffa5076458ef8f0486c4' })),
      'ok',
    );
  });
  test('V9 (pagarme-js): the bare hex, without "sha1="', async () => {
    const v9 = createDriver(pagarmeLegacyDriver, { secrets: ['key'] });
    assert.equal(await verifyOutcome(v9, webhookRequest('body', { 'x-hub-signature': '70bbf6819d1037aa94ca7e7f537cbea25fe49283' })), 'ok');
  });
});

describe('pagarme-legacy: every way a signature can be wrong', () => {
  const body = postback();
  test('signed with another API key → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-hub-signature': `sha1=${sha1(body, 'ak_test_other')}` })), 'signature_mismatch');
  });
  test('one byte of the form changed → signature_mismatch, with or without the prefix', async () => {
    const tampered = body.replace('3100', '3900');
    assert.equal(await verifyOutcome(driver, webhookRequest(tampered, { 'x-hub-signature': `sha1=${sha1(body)}` })), 'signature_mismatch');
    assert.equal(await verifyOutcome(driver, webhookRequest(tampered, { 'x-hub-signature': sha1(body) })), 'signature_mismatch');
  });
  test('no X-Hub-Signature → signature_missing', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body)), 'signature_missing');
  });
  test('another algorithm prefix or garbage → signature_malformed', async () => {
    const sha256 = createHmac('sha256', API_KEY).update(body).digest('hex');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-hub-signature': `sha256=${sha256}` })), 'signature_malformed');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-hub-signature': 'sha1=nothex' })), 'signature_malformed');
  });
});

describe('pagarme-legacy: parsing', () => {
  test('bracket keys decode into nested objects and arrays', () => {
    const event = driver.parse(webhookRequest(postback()), now);
    const payload = event.payload as { transaction: { phone: { ddd: string }; items: { id: string }[]; amount: string } };
    assert.equal(payload.transaction.phone.ddd, '11');
    assert.deepEqual(payload.transaction.items, [{ id: 'sku-1' }, { id: 'sku-2' }]);
    assert.deepEqual(
      [event.eventType, event.resourceId, event.occurredAt.toISOString()],
      ['transaction_status_changed', '4240637', '2018-09-06T19:55:14.063Z'],
    );
  });

  test('the derived key is stable across resends and ignores the fingerprint; another status is another key', () => {
    const a = driver.parse(webhookRequest(postback()), now).eventId;
    const b = driver.parse(webhookRequest(postback({ fingerprint: 'different' })), new Date(now.getTime() + 86_400_000)).eventId;
    const refunded = driver.parse(webhookRequest(postback({ current_status: 'refunded' })), now).eventId;
    assert.match(a, /^derived:[0-9a-f]{64}$/);
    assert.equal(b, a);
    assert.notEqual(refunded, a);
  });

  test('prototype keys are dropped, not merged into Object.prototype', () => {
    const decoded = decodeBracketForm('__proto__[polluted]=1&a[constructor][x]=2&ok=1');
    assert.deepEqual(decoded, { a: {}, ok: '1' });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  test('no id or event → malformed_payload', () => {
    assert.equal(
      errorCode(() => driver.parse(webhookRequest('foo=bar'), now)),
      'malformed_payload',
    );
  });
});

describe('pagarme-legacy: canonical facts', () => {
  test('paid, in integer centavos', () => {
    assert.deepEqual(driver.toPaymentFact(stored(postback())), {
      kind: 'payment.paid',
      chargeId: '4240637',
      status: 'paid',
      occurredAt: new Date('2018-09-06T19:55:14.063Z'),
      amount: 3100,
      amountRefunded: 0,
      currency: 'BRL',
    });
  });
  test('refunded in full or in part; refused; chargedback; pending_refund is no fact', () => {
    const status = (fields: Record<string, string>) => driver.toPaymentFact(stored(postback(fields)))?.status ?? null;
    assert.equal(status({ current_status: 'refunded', 'transaction[refunded_amount]': '3100' }), 'refunded');
    assert.equal(status({ current_status: 'refunded', 'transaction[refunded_amount]': '1000' }), 'partially_refunded');
    assert.equal(status({ current_status: 'refused' }), 'failed');
    assert.equal(status({ current_status: 'chargedback' }), 'charged_back');
    assert.equal(status({ current_status: 'waiting_payment' }), 'pending');
    assert.equal(status({ current_status: 'pending_refund' }), null);
    assert.equal(status({ object: 'subscription', event: 'subscription_status_changed' }), null);
  });

  test('capture=false: authorized is held funds, not paid; refunding it voids the hold (canceled, nothing refunded)', () => {
    const fact = (fields: Record<string, string>) => driver.toPaymentFact(stored(postback(fields)));
    assert.equal(fact({ old_status: 'processing', current_status: 'authorized', desired_status: 'authorized' })?.status, 'authorized');
    const voided = fact({ old_status: 'authorized', current_status: 'refunded', desired_status: 'refunded', 'transaction[refunded_amount]': '3100' });
    assert.deepEqual([voided?.status, voided?.amountRefunded], ['canceled', 0]);
    assert.equal(fact({ old_status: 'authorized', current_status: 'paid' })?.status, 'paid');
  });
});
