import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { mercadoPagoDriver } from '../../../src/gateways/mercadopago/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

// D2–D4: the official algorithm on the docs' example inputs, recomputed with openssl (the docs
// publish no secret behind their own example signature).
const SECRET = 'your_secret_key_here';
const ORDER = { dataId: 'ORD01JQ4S4KY8HWQ6NA5PXB65B3D3', requestId: '2066ca19-c6f1-498a-be75-1923005edd06', ts: '1742505638683' };
const D2 = 'fb15ae6472eb449173c556793205d77787d58f384d183bb5bc3b724c27bd103c'; // original case (SDKs)
const D3 = '633f91233312dd391ec75fa0bea539cfc2d6c4918873305b84a96cc1c58db71c'; // lower-cased (docs)
const PAYMENT = { dataId: '123456', requestId: 'bb56a2f1-6aae-46ac-982e-9dcd3581d08e', ts: '1742505638' };
const D4 = '7d14daa7dfafe1d4b14177732ea47960beb771281e24a3fa803c794067655be1'; // numeric id, seconds

const driver = createDriver(mercadoPagoDriver, { secrets: [SECRET] });
const orderBody = JSON.stringify({
  action: 'order.action_required',
  api_version: 'v1',
  application_id: '76506430185983',
  date_created: '2021-11-01T02:02:02Z',
  id: '123456',
  live_mode: false,
  type: 'order',
  user_id: 2025701502,
  data: { id: ORDER.dataId },
});
const paymentBody = JSON.stringify({
  action: 'payment.updated',
  api_version: 'v1',
  data: { id: '123456' },
  date_created: '2026-06-27T10:04:58.396-03:00',
  id: 115029489371,
  live_mode: false,
  type: 'payment',
  user_id: 724484980,
});

function notification(body: string, signature: string, query: string, requestId?: string) {
  return webhookRequest(body, { 'x-signature': signature, ...(requestId ? { 'x-request-id': requestId } : {}) }, query);
}
const orderAt = new Date(Number(ORDER.ts));
const paymentAt = new Date(Number(PAYMENT.ts) * 1000);
const sign = (manifest: string, secret = SECRET) => createHmac('sha256', secret).update(manifest).digest('hex');

describe('mercadopago: derived vectors', () => {
  test('D2: an uppercase data.id signed in its original case (the SDKs), ts in ms', async () => {
    const request = notification(orderBody, `ts=${ORDER.ts},v1=${D2}`, `data.id=${ORDER.dataId}&type=order`, ORDER.requestId);
    assert.equal(await verifyOutcome(driver, request, orderAt), 'ok');
  });
  test('D3: the same id signed lower-cased (the docs)', async () => {
    const request = notification(orderBody, `ts=${ORDER.ts},v1=${D3}`, `data.id=${ORDER.dataId}&type=order`, ORDER.requestId);
    assert.equal(await verifyOutcome(driver, request, orderAt), 'ok');
  });
  test('D4: a numeric payment id, ts in seconds', async () => {
    const request = notification(paymentBody, `ts=${PAYMENT.ts},v1=${D4}`, `data.id=${PAYMENT.dataId}&type=payment`, PAYMENT.requestId);
    assert.equal(await verifyOutcome(driver, request, paymentAt), 'ok');
  });
});

describe('mercadopago: every way a signature can be wrong', () => {
  const query = `data.id=${PAYMENT.dataId}&type=payment`;
  test('a wrong secret → signature_mismatch', async () => {
    const wrong = createDriver(mercadoPagoDriver, { secrets: ['another_secret'] });
    assert.equal(await verifyOutcome(wrong, notification(paymentBody, `ts=${PAYMENT.ts},v1=${D4}`, query, PAYMENT.requestId), paymentAt), 'signature_mismatch');
  });
  test('another data.id in the query, or another request id → signature_mismatch', async () => {
    assert.equal(
      await verifyOutcome(driver, notification(paymentBody, `ts=${PAYMENT.ts},v1=${D4}`, 'data.id=123457&type=payment', PAYMENT.requestId), paymentAt),
      'signature_mismatch',
    );
    assert.equal(
      await verifyOutcome(driver, notification(paymentBody, `ts=${PAYMENT.ts},v1=${D4}`, query, 'bb56a2f1-0000-0000-0000-9dcd3581d08e'), paymentAt),
      'signature_mismatch',
    );
  });
  test('a data.id in a case that was never signed → signature_mismatch', async () => {
    // Signed upper-case, received lower-case: only the received case and its lower-case are tried.
    const signedUpper = sign(`id:${ORDER.dataId};request-id:${ORDER.requestId};ts:${ORDER.ts};`);
    const request = notification(orderBody, `ts=${ORDER.ts},v1=${signedUpper}`, `data.id=${ORDER.dataId.toLowerCase()}&type=order`, ORDER.requestId);
    assert.equal(await verifyOutcome(driver, request, orderAt), 'signature_mismatch');
  });
  test('absent pairs are omitted from the manifest: no x-request-id', async () => {
    const signature = `ts=${PAYMENT.ts},v1=${sign(`id:${PAYMENT.dataId};ts:${PAYMENT.ts};`)}`;
    assert.equal(await verifyOutcome(driver, notification(paymentBody, signature, query), paymentAt), 'ok');
    assert.equal(await verifyOutcome(driver, notification(paymentBody, signature, query, PAYMENT.requestId), paymentAt), 'signature_mismatch');
  });
  test('no x-signature → signature_missing', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(paymentBody, {}, query), paymentAt), 'signature_missing');
  });
  test('malformed headers → signature_malformed', async () => {
    for (const value of ['this-is-garbage', `v1=${D4}`, `ts=${PAYMENT.ts}`, `ts=${PAYMENT.ts},v1=`, `ts=abc,v1=${D4}`, `ts=${PAYMENT.ts},v1=${D4.slice(1)}`]) {
      assert.equal(await verifyOutcome(driver, notification(paymentBody, value, query, PAYMENT.requestId), paymentAt), 'signature_malformed', value);
    }
  });
  test('unknown versions and spacing are tolerated; only v1 counts', async () => {
    const request = notification(paymentBody, ` v2=${'0'.repeat(64)} , ts=${PAYMENT.ts} ,V1=${D4}`, query, PAYMENT.requestId);
    assert.equal(await verifyOutcome(driver, request, paymentAt), 'ok');
  });
  test('a ts outside the tolerance, in seconds or in ms, either direction → timestamp_outside_tolerance', async () => {
    const seconds = notification(paymentBody, `ts=${PAYMENT.ts},v1=${D4}`, query, PAYMENT.requestId);
    assert.equal(await verifyOutcome(driver, seconds, new Date(paymentAt.getTime() + 301_000)), 'timestamp_outside_tolerance');
    assert.equal(await verifyOutcome(driver, seconds, new Date(paymentAt.getTime() - 301_000)), 'timestamp_outside_tolerance');
    const millis = notification(orderBody, `ts=${ORDER.ts},v1=${D2}`, `data.id=${ORDER.dataId}`, ORDER.requestId);
    assert.equal(await verifyOutcome(driver, millis, new Date(orderAt.getTime() + 301_000)), 'timestamp_outside_tolerance');
  });
  test('checkTimestamp: false accepts an old ts whose signature is valid', async () => {
    const lenient = createDriver(mercadoPagoDriver, { secrets: [SECRET], options: { checkTimestamp: false } });
    assert.equal(
      await verifyOutcome(lenient, notification(paymentBody, `ts=${PAYMENT.ts},v1=${D4}`, query, PAYMENT.requestId), new Date('2030-01-01T00:00:00Z')),
      'ok',
    );
  });
});

describe('mercadopago: parsing', () => {
  const now = new Date('2026-07-01T00:00:00Z');
  test('notification id, action, the signed data.id, date_created with an offset', () => {
    const event = driver.parse(webhookRequest(paymentBody, {}, 'data.id=123456&type=payment'), now);
    assert.deepEqual(
      [event.eventId, event.eventType, event.resourceId, event.occurredAt.toISOString()],
      ['115029489371', 'payment.updated', '123456', '2026-06-27T13:04:58.396Z'],
    );
    assert.equal(driver.toPaymentFact({ provider: 'mercadopago', ...event, payloadLossy: false }), null, 'thin: the status comes from refetch');
  });
  test('nanosecond date_created', () => {
    const body = paymentBody.replace('2026-06-27T10:04:58.396-03:00', '2025-05-12T22:47:05.813331521Z');
    assert.equal(driver.parse(webhookRequest(body, {}, 'data.id=123456'), now).occurredAt.toISOString(), '2025-05-12T22:47:05.813Z');
  });
  test('a body whose data.id is not the signed one → 401 signature_mismatch', () => {
    assert.equal(
      errorCode(() => driver.parse(webhookRequest(paymentBody, {}, 'data.id=999'), now)),
      'signature_mismatch',
    );
  });
  test('the signed id keeps its case in the resource', () => {
    assert.equal(driver.parse(webhookRequest(orderBody, {}, `data.id=${ORDER.dataId}`), now).resourceId, ORDER.dataId);
  });
  test('without a body id: a derived key', () => {
    const body = JSON.stringify({ action: 'payment.created', type: 'payment', data: { id: '42' }, date_created: '2026-01-01T00:00:00Z' });
    const a = driver.parse(webhookRequest(body, {}, 'data.id=42'), now);
    const b = driver.parse(webhookRequest(body, {}, 'data.id=42'), new Date(now.getTime() + 900_000));
    assert.match(a.eventId, /^derived:/);
    assert.equal(a.eventId, b.eventId);
  });
});
