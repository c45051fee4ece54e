/**
 * `inboxctl backfill asaas --account <id>`: a subaccount's charges are listed with its own API key
 * (the fake Asaas API answers each key with that account's charges only, 401 to any other key),
 * stored as that account's events, and re-read with that key too.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import type { FakeGateway, RecordedRequest } from '../support/fake-gateway.ts';
import { waitUntilSettled } from '../processing/harness.ts';
import { useBackfillService } from './backfill-fixture.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
const PROVIDER = 'asaas';
const ROOT_KEY = '$aact_backfill_root';
const KEYS: Record<string, string> = { 'loja-a': '$aact_backfill_loja_a', 'loja-b': '$aact_backfill_loja_b' };

const saoPauloDate = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000 - 3 * 3_600_000).toISOString().slice(0, 10);

function charge(id: string, status: string) {
  return {
    object: 'payment',
    id,
    status,
    value: 80.5,
    dateCreated: saoPauloDate(1),
    deleted: false,
    refunds: null,
    confirmedDate: saoPauloDate(1),
    paymentDate: saoPauloDate(1),
  };
}

/** Each key's account at Asaas: the charges it holds. */
const holdings: Record<string, ReturnType<typeof charge>[]> = {
  [ROOT_KEY]: [charge('pay_root_1', 'RECEIVED')],
  [KEYS['loja-a']!]: [charge('pay_a_1', 'RECEIVED')],
  [KEYS['loja-b']!]: [charge('pay_b_1', 'RECEIVED'), charge('pay_b_2', 'REFUNDED')],
};

function asaasApi(gateway: FakeGateway) {
  gateway.rules.push((request: RecordedRequest) => {
    const held = holdings[String(request.headers.access_token)];
    if (!held) return { status: 401, json: { errors: [{ code: 'invalid_access_token' }] } };
    const byId = /^\/v3\/payments\/(\w+)$/.exec(request.pathname);
    if (byId) {
      const found = held.find((c) => c.id === byId[1]);
      return found ? { status: 200, json: found } : { status: 404, json: { errors: [{ code: 'not_found' }] } };
    }
    if (request.pathname !== '/v3/payments') return undefined;
    return { status: 200, json: { object: 'list', hasMore: false, totalCount: held.length, limit: 100, offset: 0, data: [...held].reverse() } };
  });
}

const backfill = useBackfillService(database, {
  provider: PROVIDER,
  providerConfig: {
    accounts: [
      { id: 'loja-a', token: 'asaas-backfill-loja-a-token-0123456789', apiKey: KEYS['loja-a'] },
      { id: 'loja-b', token: 'asaas-backfill-loja-b-token-0123456789', apiKey: KEYS['loja-b'] },
    ],
  },
  env: { WEBHOOK_SECRET_ASAAS: 'asaas-backfill-root-token-0123456789ab', GATEWAY_API_KEY_ASAAS: ROOT_KEY },
  serve: asaasApi,
});

describe('inboxctl backfill --account (Asaas subaccounts)', () => {
  test("lists one subaccount with its key, stores its events as that account's, and re-reads them with that key", async () => {
    const run = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--account', 'loja-b', '--json'], backfill.env);
    assert.equal(run.code, 1, run.stderr);
    const ids = ['backfill:pay_b_1:PAYMENT_RECEIVED', 'backfill:pay_b_2:PAYMENT_REFUNDED'];
    assert.deepEqual([...run.json().storedEventIds].sort(), ids);
    await waitUntilSettled(database.sql, ids, 20_000, PROVIDER);

    const rows = await database.sql`select event_id, account from webhook_inbox order by event_id`;
    assert.deepEqual(
      rows.map((r) => [r.event_id, r.account]),
      ids.map((id) => [id, 'loja-b']),
    );
    const payments = await database.sql`select gateway_charge_id, account, status from payments order by gateway_charge_id`;
    assert.deepEqual(
      payments.map((r) => [r.gateway_charge_id, r.account, r.status]),
      [
        ['pay_b_1', 'loja-b', 'paid'],
        ['pay_b_2', 'loja-b', 'refunded'],
      ],
    );
    // The refund is a high-impact kind, re-read by default: with loja-b's key, as the list was.
    const used = backfill.gateway.requests.map((r) => [r.pathname, r.headers.access_token]);
    assert.ok(
      used.some(([path]) => path === '/v3/payments/pay_b_2'),
      JSON.stringify(used),
    );
    assert.ok(
      used.every(([, key]) => key === KEYS['loja-b']),
      JSON.stringify(used),
    );
  });

  test('an account the provider does not have is exit 2, before any call', async () => {
    const before = backfill.gateway.requests.length;
    const run = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--account', 'loja-z'], backfill.env);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /provider "asaas" has no account "loja-z" in INBOX_CONFIG accounts \(loja-a, loja-b\)/);
    assert.equal(backfill.gateway.requests.length, before);
  });
});
