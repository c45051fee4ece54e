import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { type JwksServer, type TestSigningKey, generateSigningKey, startJwksServer } from './jwks-server.ts';
import { publishedFailed, publishedPreAuthorization } from './zoop/published-events.ts';

// From HTTP to the inbox row to the payments table, one payment driver at a time, through the
// real service (INBOX_ROLE=all: receiver and workers) on a real database. Every signature is made
// here with node:crypto (or the official standardwebhooks signer), never by the driver.
const ASAAS_TOKEN = 'asaas-e2e-token-0123456789abcdefghij';
const PAGARME_API_KEY = 'ak_test_e2e_legacy';
const ZOOP_AUTHORIZATION = `Basic ${Buffer.from('zoop:e2e').toString('base64')}`;
const MP_SECRET = 'mp-e2e-secret-signature';
const SW_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

const database = useTestDatabase();
let service: TestService;
let jwks: JwksServer;
let pagarmeKey: TestSigningKey;

setup(async () => {
  pagarmeKey = generateSigningKey('e2e-key');
  jwks = await startJwksServer([pagarmeKey]);
  const file = JSON.stringify({
    providers: {
      pagarme: { driver: 'pagarme', jwksUrl: jwks.url },
      // Thin-notification gateways refetch by default; these tests read the payload instead.
      zoop: { driver: 'zoop', ordering: { default: 'occurred_at' } },
      mercadopago: { driver: 'mercadopago', ordering: { default: 'occurred_at' } },
    },
  });
  const env = {
    INBOX_ROLE: 'all',
    INBOX_CONFIG: '/inbox.json',
    WEBHOOK_SECRET_ASAAS: ASAAS_TOKEN,
    WEBHOOK_SECRET_PAGARME_LEGACY: PAGARME_API_KEY,
    WEBHOOK_SECRET_ZOOP: ZOOP_AUTHORIZATION,
    WEBHOOK_SECRET_MERCADOPAGO: MP_SECRET,
    WEBHOOK_SECRET_STANDARD_WEBHOOKS: SW_SECRET,
  };
  service = await startTestService({ database, env, files: { '/inbox.json': file } });
});

after(async () => {
  await jwks?.close();
});

async function post(provider: string, body: string, headers: Record<string, string>, query = '') {
  const response = await fetch(`${service.baseUrl}/webhooks/${provider}${query}`, { method: 'POST', body, headers });
  assert.equal(response.status, 200, await response.clone().text());
  assert.deepEqual(await response.json(), { received: true });
}

async function inboxRow(provider: string, eventId: string) {
  const rows = await database.sql`
    select event_id, event_type, resource_id, occurred_at, status from webhook_inbox where provider = ${provider} and event_id = ${eventId}`;
  assert.equal(rows.length, 1, `one inbox row for ${provider} ${eventId}`);
  return rows[0]!;
}

async function settledPayment(provider: string, chargeId: string) {
  return waitFor(
    async () => {
      const [row] = await database.sql`
      select status, amount::int as amount, currency from payments where provider = ${provider} and gateway_charge_id = ${chargeId}`;
      return row;
    },
    { message: `the ${provider} payment ${chargeId}` },
  );
}

describe('payment gateways end to end', () => {
  test('asaas: PAYMENT_RECEIVED → inbox row → payment paid, 100.00 as 10000', async () => {
    const body = JSON.stringify({
      id: 'evt_e2e0000000000000000000000000001&1001',
      event: 'PAYMENT_RECEIVED',
      dateCreated: '2024-06-12 16:45:03',
      payment: { object: 'payment', id: 'pay_e2e_asaas_1', value: 100.0, netValue: 98.01, billingType: 'PIX', status: 'RECEIVED' },
    });
    await post('asaas', body, { 'content-type': 'application/json', 'asaas-access-token': ASAAS_TOKEN });
    await post('asaas', body, { 'content-type': 'application/json', 'asaas-access-token': ASAAS_TOKEN }); // a resend: still one row
    const row = await inboxRow('asaas', 'evt_e2e0000000000000000000000000001&1001');
    assert.deepEqual([row.event_type, row.resource_id, row.occurred_at.toISOString()], ['PAYMENT_RECEIVED', 'pay_e2e_asaas_1', '2024-06-12T19:45:03.000Z']);
    assert.deepEqual({ ...(await settledPayment('asaas', 'pay_e2e_asaas_1')) }, { status: 'paid', amount: 10000, currency: 'BRL' });
  });

  test('pagarme (v5): RS256-signed charge.paid, key from the JWKS → payment paid', async () => {
    const body = JSON.stringify({
      id: 'hook_e2eE2eE2eE2eE2e1',
      account: { id: 'acc_e2e', name: 'Loja' },
      type: 'charge.paid',
      created_at: '2025-01-01T04:15:39.1234567Z',
      data: { id: 'ch_e2e_pagarme_1', amount: 2590, paid_amount: 2590, status: 'paid', currency: 'BRL', paid_at: '2025-01-01T04:15:39Z' },
    });
    await post('pagarme', body, { 'content-type': 'application/json', 'x-webhook-asymmetric-signature': pagarmeKey.header(body) });
    const row = await inboxRow('pagarme', 'hook_e2eE2eE2eE2eE2e1');
    assert.deepEqual([row.event_type, row.resource_id, row.occurred_at.toISOString()], ['charge.paid', 'ch_e2e_pagarme_1', '2025-01-01T04:15:39.123Z']);
    assert.deepEqual({ ...(await settledPayment('pagarme', 'ch_e2e_pagarme_1')) }, { status: 'paid', amount: 2590, currency: 'BRL' });
  });

  test('pagarme-legacy: form-encoded postback, sha1 with the API key, derived event id → payment paid', async () => {
    const body = new URLSearchParams({
      id: '4240999',
      event: 'transaction_status_changed',
      old_status: 'waiting_payment',
      desired_status: 'paid',
      current_status: 'paid',
      object: 'transaction',
      'transaction[status]': 'paid',
      'transaction[amount]': '3100',
      'transaction[refunded_amount]': '0',
      'transaction[date_updated]': '2018-09-06T19:55:14.063Z',
    }).toString();
    const signature = `sha1=${createHmac('sha1', PAGARME_API_KEY).update(body).digest('hex')}`;
    await post('pagarme-legacy', body, { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature': signature });
    const [row] = await database.sql`select event_id, event_type, resource_id, occurred_at, payload from webhook_inbox where provider = 'pagarme-legacy'`;
    assert.match(row!.event_id, /^derived:[0-9a-f]{64}$/);
    assert.deepEqual(
      [row!.event_type, row!.resource_id, row!.occurred_at.toISOString()],
      ['transaction_status_changed', '4240999', '2018-09-06T19:55:14.063Z'],
    );
    assert.equal(row!.payload.transaction.amount, '3100', 'the form is stored decoded');
    assert.deepEqual({ ...(await settledPayment('pagarme-legacy', '4240999')) }, { status: 'paid', amount: 3100, currency: 'BRL' });
  });

  test('zoop: transaction.succeeded with the Authorization header → payment paid, "1484.34" as 148434', async () => {
    const body = JSON.stringify({
      id: 'e2e4679634d4e4b6dbc9fa8990c8f01f',
      type: 'transaction.succeeded',
      resource: 'event',
      created_at: '2020-07-06T14:01:51+0000',
      payload: {
        object: { id: 'e2edf0dd9c57143ef8cc46924f4ba9e9', resource: 'transaction', status: 'succeeded', amount: '1484.34', currency: 'BRL', captured: true },
      },
    });
    await post('zoop', body, { 'content-type': 'application/json', authorization: ZOOP_AUTHORIZATION });
    const row = await inboxRow('zoop', 'e2e4679634d4e4b6dbc9fa8990c8f01f');
    assert.deepEqual(
      [row.event_type, row.resource_id, row.occurred_at.toISOString()],
      ['transaction.succeeded', 'e2edf0dd9c57143ef8cc46924f4ba9e9', '2020-07-06T14:01:51.000Z'],
    );
    assert.deepEqual({ ...(await settledPayment('zoop', 'e2edf0dd9c57143ef8cc46924f4ba9e9')) }, { status: 'paid', amount: 148434, currency: 'BRL' });
  });

  test('mercadopago: x-signature over the query data.id → inbox row (a thin notice: the payment comes from refetch)', async () => {
    const body = JSON.stringify({
      action: 'payment.updated',
      api_version: 'v1',
      data: { id: '987654321' },
      date_created: '2026-06-27T10:04:58.396-03:00',
      id: 115029489999,
      live_mode: false,
      type: 'payment',
      user_id: 724484980,
    });
    const ts = String(Date.now());
    const requestId = 'bb56a2f1-6aae-46ac-982e-9dcd3581d0e2';
    const v1 = createHmac('sha256', MP_SECRET).update(`id:987654321;request-id:${requestId};ts:${ts};`).digest('hex');
    await post(
      'mercadopago',
      body,
      { 'content-type': 'application/json', 'x-signature': `ts=${ts},v1=${v1}`, 'x-request-id': requestId },
      '?data.id=987654321&type=payment',
    );
    const row = await inboxRow('mercadopago', '115029489999');
    assert.deepEqual([row.event_type, row.resource_id, row.occurred_at.toISOString()], ['payment.updated', '987654321', '2026-06-27T13:04:58.396Z']);
  });

  test('standard-webhooks: the official signer over real HTTP → inbox row keyed by webhook-id', async () => {
    const body = '{"type":"invoice.paid","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"in_e2e_1"}}';
    const headers = { 'webhook-id': 'msg_e2e_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    const signature = new Webhook(SW_SECRET).sign(headers['webhook-id'], new Date(Number(headers['webhook-timestamp']) * 1000), body);
    await post('standard-webhooks', body, { 'content-type': 'application/json', ...headers, 'webhook-signature': signature });
    const row = await inboxRow('standard-webhooks', 'msg_e2e_1');
    assert.deepEqual([row.event_type, row.resource_id, row.occurred_at.toISOString()], ['invoice.paid', 'in_e2e_1', '2022-11-03T20:26:10.344Z']);
  });
});

// Authorization is not payment: funds held on a card are `authorized`, then paid on capture or
// canceled when released. Histories that end with a capture or a release are mostly posted newest
// first, the worst arrival order.
describe('pre-authorizations end to end', () => {
  const asaas = (id: string, event: string, dateCreated: string, payment: Record<string, unknown>) =>
    JSON.stringify({
      id,
      event,
      dateCreated,
      payment: { object: 'payment', value: 250.0, billingType: 'CREDIT_CARD', confirmedDate: null, paymentDate: null, ...payment },
    });
  const postAsaas = (body: string) => post('asaas', body, { 'content-type': 'application/json', 'asaas-access-token': ASAAS_TOKEN });

  test('asaas: PAYMENT_AUTHORIZED alone is authorized (not paid); its capture is paid; a released one is canceled', async () => {
    await postAsaas(asaas('evt_e2e_auth_1&1', 'PAYMENT_AUTHORIZED', '2025-03-01 10:00:00', { id: 'pay_e2e_held', status: 'AUTHORIZED' }));
    assert.deepEqual({ ...(await settledPayment('asaas', 'pay_e2e_held')) }, { status: 'authorized', amount: 25000, currency: 'BRL' });

    await postAsaas(
      asaas('evt_e2e_auth_3&3', 'PAYMENT_CONFIRMED', '2025-03-02 09:00:00', { id: 'pay_e2e_captured', status: 'CONFIRMED', confirmedDate: '2025-03-02' }),
    );
    await postAsaas(asaas('evt_e2e_auth_2&2', 'PAYMENT_AUTHORIZED', '2025-03-01 10:00:00', { id: 'pay_e2e_captured', status: 'AUTHORIZED' }));
    await waitFor(async () => (await inboxRow('asaas', 'evt_e2e_auth_2&2')).status !== 'pending', { message: 'the late authorization to be processed' });
    assert.deepEqual({ ...(await settledPayment('asaas', 'pay_e2e_captured')) }, { status: 'paid', amount: 25000, currency: 'BRL' });

    await postAsaas(asaas('evt_e2e_auth_5&5', 'PAYMENT_REFUNDED', '2025-03-02 09:00:00', { id: 'pay_e2e_released', status: 'REFUNDED' }));
    await postAsaas(asaas('evt_e2e_auth_4&4', 'PAYMENT_AUTHORIZED', '2025-03-01 10:00:00', { id: 'pay_e2e_released', status: 'AUTHORIZED' }));
    await waitFor(async () => (await inboxRow('asaas', 'evt_e2e_auth_4&4')).status !== 'pending', { message: 'the late authorization to be processed' });
    const [released] =
      await database.sql`select status, amount_refunded::int as refunded from payments where provider = 'asaas' and gateway_charge_id = 'pay_e2e_released'`;
    assert.deepEqual({ ...released }, { status: 'canceled', refunded: 0 });
  });

  test('pagarme (v5): charge.pending with an authorized_pending_capture transaction is authorized; charge.paid captures it', async () => {
    const hook = (id: string, type: string, createdAt: string, data: Record<string, unknown>) =>
      JSON.stringify({
        id,
        account: { id: 'acc_e2e', name: 'Loja' },
        type,
        created_at: createdAt,
        data: { id: 'ch_e2e_pagarme_auth', amount: 7000, currency: 'BRL', ...data },
      });
    const pending = hook('hook_e2eAuth1', 'charge.pending', '2025-02-01T10:00:00Z', {
      status: 'pending',
      paid_amount: 0,
      paid_at: null,
      last_transaction: { id: 'tran_e2e', transaction_type: 'credit_card', status: 'authorized_pending_capture' },
    });
    const paid = hook('hook_e2eAuth2', 'charge.paid', '2025-02-03T10:00:00Z', {
      status: 'paid',
      paid_amount: 7000,
      paid_at: '2025-02-03T10:00:00Z',
      last_transaction: { id: 'tran_e2e', transaction_type: 'credit_card', status: 'captured' },
    });
    await post('pagarme', pending, { 'content-type': 'application/json', 'x-webhook-asymmetric-signature': pagarmeKey.header(pending) });
    assert.deepEqual({ ...(await settledPayment('pagarme', 'ch_e2e_pagarme_auth')) }, { status: 'authorized', amount: 7000, currency: 'BRL' });
    await post('pagarme', paid, { 'content-type': 'application/json', 'x-webhook-asymmetric-signature': pagarmeKey.header(paid) });
    await waitFor(async () => (await inboxRow('pagarme', 'hook_e2eAuth2')).status !== 'pending', { message: 'the capture to be processed' });
    assert.deepEqual({ ...(await settledPayment('pagarme', 'ch_e2e_pagarme_auth')) }, { status: 'paid', amount: 7000, currency: 'BRL' });
  });

  test('zoop: transaction.pre_authorized alone is authorized; voided (the void posted first) it ends canceled', async () => {
    const event = (id: string, type: string, transaction: string, createdAt: string, object: Record<string, unknown>) =>
      JSON.stringify({
        id,
        type,
        resource: 'event',
        created_at: createdAt,
        payload: { object: { id: transaction, resource: 'transaction', amount: '80.00', currency: 'BRL', ...object } },
      });
    const postZoop = (body: string) => post('zoop', body, { 'content-type': 'application/json', authorization: ZOOP_AUTHORIZATION });
    await postZoop(
      event('e2e0auth00000000000000000000000a0', 'transaction.pre_authorized', 'e2e0auth0000000000000000000000000', '2025-02-01T10:00:00+0000', {
        status: 'pre_authorized',
        captured: false,
      }),
    );
    assert.deepEqual({ ...(await settledPayment('zoop', 'e2e0auth0000000000000000000000000')) }, { status: 'authorized', amount: 8000, currency: 'BRL' });
    await postZoop(
      event('e2e0auth00000000000000000000000a2', 'transaction.void.succeeded', 'e2e0auth0000000000000000000000001', '2025-02-02T10:00:00+0000', {
        status: 'canceled',
        captured: false,
        voided: true,
      }),
    );
    await postZoop(
      event('e2e0auth00000000000000000000000a1', 'transaction.pre_authorized', 'e2e0auth0000000000000000000000001', '2025-02-01T10:00:00+0000', {
        status: 'pre_authorized',
        captured: false,
      }),
    );
    await waitFor(async () => (await inboxRow('zoop', 'e2e0auth00000000000000000000000a1')).status !== 'pending', {
      message: 'the late authorization to be processed',
    });
    assert.deepEqual({ ...(await settledPayment('zoop', 'e2e0auth0000000000000000000000001')) }, { status: 'canceled', amount: 8000, currency: 'BRL' });
  });
});

// A chargeback some gateways announce with no dispute event before it: applied from paid (it was
// refused as a transition, the payment staying paid while the money went back). Posted first,
// before the payment it charges back: the worst arrival order.
describe('chargebacks announced without a dispute, end to end', () => {
  const status = async (provider: string, chargeId: string, eventId: string) => {
    await waitFor(async () => (await inboxRow(provider, eventId)).status !== 'pending', { message: `${eventId} to be processed` });
    return (await settledPayment(provider, chargeId)).status;
  };

  test('pagarme (v5): charge.chargedback after charge.paid → charged_back', async () => {
    const hook = (id: string, type: string, createdAt: string, data: Record<string, unknown>) =>
      JSON.stringify({
        id,
        account: { id: 'acc_e2e', name: 'Loja' },
        type,
        created_at: createdAt,
        data: { id: 'ch_e2e_pagarme_cb', amount: 4200, currency: 'BRL', paid_amount: 4200, paid_at: '2025-03-01T10:00:00Z', ...data },
      });
    const chargedback = hook('hook_e2eCb2', 'charge.chargedback', '2025-04-10T10:00:00Z', {
      status: 'chargedback',
      last_transaction: { id: 'tran_cb', status: 'chargedback' },
    });
    const paid = hook('hook_e2eCb1', 'charge.paid', '2025-03-01T10:00:00Z', { status: 'paid', last_transaction: { id: 'tran_cb', status: 'captured' } });
    for (const body of [chargedback, paid])
      await post('pagarme', body, { 'content-type': 'application/json', 'x-webhook-asymmetric-signature': pagarmeKey.header(body) });
    assert.equal(await status('pagarme', 'ch_e2e_pagarme_cb', 'hook_e2eCb1'), 'charged_back');
  });

  test('pagarme-legacy: a paid transaction gone chargedback → charged_back', async () => {
    const postback = (current: string, old: string, updated: string) => {
      const body = new URLSearchParams({
        id: '4240777',
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
      return { body, signature: `sha1=${createHmac('sha1', PAGARME_API_KEY).update(body).digest('hex')}` };
    };
    for (const { body, signature } of [
      postback('chargedback', 'paid', '2018-10-20T12:00:00.000Z'),
      postback('paid', 'waiting_payment', '2018-09-06T19:55:14.063Z'),
    ]) {
      await post('pagarme-legacy', body, { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature': signature });
    }
    await waitFor(
      async () => {
        const rows = await database.sql`select status from webhook_inbox where provider = 'pagarme-legacy' and resource_id = '4240777'`;
        return rows.length === 2 && rows.every((r) => r.status !== 'pending') ? rows : undefined;
      },
      { message: 'both postbacks processed' },
    );
    assert.equal((await settledPayment('pagarme-legacy', '4240777')).status, 'charged_back');
  });

  test('zoop: transaction.charged_back after transaction.succeeded → charged_back', async () => {
    const event = (id: string, type: string, createdAt: string, object: Record<string, unknown>) =>
      JSON.stringify({
        id,
        type,
        resource: 'event',
        created_at: createdAt,
        payload: { object: { id: 'e2e0cb00000000000000000000000000', resource: 'transaction', amount: '61.00', currency: 'BRL', captured: true, ...object } },
      });
    await post('zoop', event('e2e0cb000000000000000000000000b2', 'transaction.charged_back', '2025-04-02T10:00:00+0000', { status: 'charged_back' }), {
      'content-type': 'application/json',
      authorization: ZOOP_AUTHORIZATION,
    });
    await post('zoop', event('e2e0cb000000000000000000000000b1', 'transaction.succeeded', '2025-03-02T10:00:00+0000', { status: 'succeeded' }), {
      'content-type': 'application/json',
      authorization: ZOOP_AUTHORIZATION,
    });
    assert.equal(await status('zoop', 'e2e0cb00000000000000000000000000', 'e2e0cb000000000000000000000000b1'), 'charged_back');
  });
});

describe('zoop: the events imobanco/zoop-wrapper published, over HTTP', () => {
  const postZoop = (body: string) =>
    fetch(`${service.baseUrl}/webhooks/zoop`, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: ZOOP_AUTHORIZATION } });

  test('transaction.failed as published (its transaction under payload, ids blank) is stored, not refused as malformed', async () => {
    const response = await postZoop(publishedFailed());
    assert.equal(response.status, 200, await response.clone().text());
    const [row] =
      await database.sql`select event_type, resource_id, status, decision from webhook_inbox where provider = 'zoop' and event_type = 'transaction.failed'`;
    assert.deepEqual([row!.event_type, row!.resource_id], ['transaction.failed', null]);
  });

  test('transaction.pre_authorization.succeeded with its transaction id → the payment is authorized', async () => {
    await post('zoop', publishedPreAuthorization('e2e0pre0000000000000000000000001'), {
      'content-type': 'application/json',
      authorization: ZOOP_AUTHORIZATION,
    });
    assert.deepEqual({ ...(await settledPayment('zoop', 'e2e0pre0000000000000000000000001')) }, { status: 'authorized', amount: 1499, currency: 'BRL' });
  });
});

describe('refused deliveries', () => {
  test('a wrong Asaas token is refused with 401 and stores nothing', async () => {
    const body = JSON.stringify({ id: 'evt_e2e_refused&1', event: 'PAYMENT_RECEIVED', payment: { id: 'pay_e2e_refused', value: 1 } });
    const response = await fetch(`${service.baseUrl}/webhooks/asaas`, { method: 'POST', body, headers: { 'asaas-access-token': 'not-the-token' } });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'signature_mismatch');
    assert.equal((await database.sql`select count(*)::int as n from webhook_inbox where event_id = 'evt_e2e_refused&1'`)[0]!.n, 0);
  });
});
