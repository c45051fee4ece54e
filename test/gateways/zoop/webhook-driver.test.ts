import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { zoopDriver } from '../../../src/gateways/zoop/webhook-driver.ts';
import type { StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { createDriver, verifyOutcome, webhookRequest } from '../request.ts';
import { publishedFailed, publishedPreAuthorization } from './published-events.ts';

const AUTHORIZATION = `Basic ${Buffer.from('zoop:webhook-password').toString('base64')}`;
const driver = createDriver(zoopDriver, { secrets: [AUTHORIZATION] });
const now = new Date('2026-01-01T00:00:00Z');

// The shape of imobanco/zoop-wrapper's examples/data/events/transaction_succeeded.json, abridged.
function zoopEvent(type: string, object: Record<string, unknown> = {}, envelope: Record<string, unknown> = {}) {
  return JSON.stringify({
    id: 'cf4679634d4e4b6dbc9fa8990c8f01f9',
    type,
    resource: 'event',
    payload: {
      object: {
        id: '32df0dd9c57143ef8cc46924f4ba9e98',
        resource: 'transaction',
        status: 'succeeded',
        amount: '1484.34',
        currency: 'BRL',
        refunded: false,
        voided: false,
        captured: true,
        created_at: '2020-07-06T14:01:48+00:00',
        ...object,
      },
    },
    created_at: '2020-07-06T14:01:51+0000',
    ...envelope,
  });
}

const stored = (body: string): StoredEvent => ({ provider: 'zoop', ...driver.parse(webhookRequest(body), now), payloadLossy: false });

describe('zoop: the optional Authorization header', () => {
  test('the configured value verifies', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(zoopEvent('transaction.succeeded'), { authorization: AUTHORIZATION })), 'ok');
  });
  test('another value → signature_mismatch; none → signature_missing', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest('{}', { authorization: 'Basic d3Jvbmc6d3Jvbmc=' })), 'signature_mismatch');
    assert.equal(await verifyOutcome(driver, webhookRequest('{}')), 'signature_missing');
  });
  test('without a configured secret nothing is checked (refetch is the defence)', async () => {
    assert.equal(await verifyOutcome(createDriver(zoopDriver), webhookRequest('{}')), 'ok');
  });
});

describe('zoop: parsing and facts', () => {
  test('id, type, payload.object.id, created_at with a colon-less offset', () => {
    const event = driver.parse(webhookRequest(zoopEvent('transaction.succeeded')), now);
    assert.deepEqual(
      [event.eventId, event.eventType, event.resourceId, event.occurredAt.toISOString()],
      ['cf4679634d4e4b6dbc9fa8990c8f01f9', 'transaction.succeeded', '32df0dd9c57143ef8cc46924f4ba9e98', '2020-07-06T14:01:51.000Z'],
    );
  });

  test('transaction.succeeded → paid, "1484.34" → 148434', () => {
    assert.deepEqual(driver.toPaymentFact(stored(zoopEvent('transaction.succeeded'))), {
      kind: 'payment.paid',
      chargeId: '32df0dd9c57143ef8cc46924f4ba9e98',
      status: 'paid',
      occurredAt: new Date('2020-07-06T14:01:51Z'),
      amount: 148434,
      amountRefunded: undefined,
      currency: 'BRL',
    });
  });

  test('failed / charged_back / reversed', () => {
    assert.equal(driver.toPaymentFact(stored(zoopEvent('transaction.failed', { status: 'failed', captured: false })))?.status, 'failed');
    assert.equal(driver.toPaymentFact(stored(zoopEvent('transaction.charged_back')))?.status, 'charged_back');
    const reversed = driver.toPaymentFact(stored(zoopEvent('transaction.reversed', { amount: '5.00' })));
    assert.deepEqual([reversed?.status, reversed?.amountRefunded], ['refunded', 500]);
  });

  test('transaction.pre_authorized is held funds (authorized); captured → paid; voided before capture → canceled', () => {
    const status = (type: string, object: Record<string, unknown>) => driver.toPaymentFact(stored(zoopEvent(type, object)))?.status;
    assert.equal(status('transaction.pre_authorized', { status: 'pre_authorized', captured: false }), 'authorized');
    assert.equal(status('transaction.capture.succeeded', { status: 'succeeded', captured: true }), 'paid');
    assert.equal(status('transaction.void.succeeded', { status: 'canceled', captured: false, voided: true }), 'canceled');
  });

  test('canceled before capture is canceled; a captured transaction voided is a refund', () => {
    assert.equal(driver.toPaymentFact(stored(zoopEvent('transaction.canceled', { status: 'canceled', captured: false })))?.status, 'canceled');
    assert.equal(driver.toPaymentFact(stored(zoopEvent('transaction.canceled', { status: 'canceled', captured: true, voided: true })))?.status, 'refunded');
  });

  test('non-transaction events have no payment fact', () => {
    assert.equal(driver.toPaymentFact(stored(zoopEvent('seller.activated', { resource: 'seller' }))), null);
  });

  test('without an event id: a derived key, stable across resends', () => {
    const body = zoopEvent('transaction.succeeded', {}, { id: undefined });
    const a = driver.parse(webhookRequest(body), now);
    const b = driver.parse(webhookRequest(body), new Date(now.getTime() + 60_000));
    assert.match(a.eventId, /^derived:/);
    assert.equal(a.eventId, b.eventId);
  });
});

describe('zoop: the envelopes the wrapper published', () => {
  test('transaction.failed as published (transaction under payload, ids blank) is an event, not a malformed body', () => {
    const event = driver.parse(webhookRequest(publishedFailed()), now);
    assert.match(event.eventId, /^derived:/, 'an empty id is no id');
    assert.deepEqual([event.eventType, event.resourceId, event.occurredAt.toISOString()], ['transaction.failed', null, '2020-06-25T18:03:27.000Z']);
    assert.equal(driver.toPaymentFact(stored(publishedFailed())), null, 'no transaction id: no payment to key it by');
  });

  test('the same envelope with its transaction id is a failed payment fact', () => {
    const fact = driver.toPaymentFact(stored(publishedFailed('a1b2c3d4e5f60718293a4b5c6d7e8f90')));
    assert.deepEqual([fact?.chargeId, fact?.status, fact?.amount, fact?.currency], ['a1b2c3d4e5f60718293a4b5c6d7e8f90', 'failed', 1005, 'BRL']);
  });

  test('transaction.pre_authorization.succeeded as published (transaction under a top-level object) is read: its type, its time', () => {
    const event = driver.parse(webhookRequest(publishedPreAuthorization()), now);
    assert.match(event.eventId, /^derived:/);
    // No created_at on the envelope: the transaction's updated_at is when it was pre-authorized (stable across resends).
    assert.deepEqual(
      [event.eventType, event.resourceId, event.occurredAt.toISOString()],
      ['transaction.pre_authorization.succeeded', null, '2020-06-26T12:20:18.000Z'],
    );
  });

  test('with its transaction id, the pre-authorization is keyed by it and is held funds (authorized)', () => {
    const body = publishedPreAuthorization('0f1e2d3c4b5a69788796a5b4c3d2e1f0');
    assert.equal(driver.parse(webhookRequest(body), now).resourceId, '0f1e2d3c4b5a69788796a5b4c3d2e1f0');
    const fact = driver.toPaymentFact(stored(body));
    assert.deepEqual([fact?.chargeId, fact?.status, fact?.amount], ['0f1e2d3c4b5a69788796a5b4c3d2e1f0', 'authorized', 1499]);
  });
});
