import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import type { FakeGateway, RecordedRequest } from '../support/fake-gateway.ts';
import { paymentOf, waitUntilSettled } from '../processing/harness.ts';
import { useBackfillService } from './backfill-fixture.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
const API_KEY = '$aact_backfill_cli_test';
const PAGE_SIZE = 2;
const PROVIDER = 'asaas';

/** Asaas's charge dates: YYYY-MM-DD in São Paulo time (UTC-03:00). */
const saoPauloDate = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000 - 3 * 3_600_000).toISOString().slice(0, 10);

type Charge = Record<string, unknown> & { id: string; status: string; dateCreated: string };

function charge(id: string, status: string, createdDaysAgo: number, extra: Record<string, unknown> = {}): Charge {
  const paid = !['PENDING', 'OVERDUE'].includes(status);
  return {
    object: 'payment',
    id,
    status,
    value: 150.25,
    dateCreated: saoPauloDate(createdDaysAgo),
    deleted: false,
    refunds: null,
    confirmedDate: paid ? saoPauloDate(createdDaysAgo) : null,
    paymentDate: paid ? saoPauloDate(createdDaysAgo) : null,
    ...extra,
  };
}

// What the Asaas account holds, in creation order. The test changes it between runs.
const account = new Map<string, Charge>(
  [
    charge('pay_bf_1', 'RECEIVED', 2),
    charge('pay_bf_2', 'PENDING', 2),
    charge('pay_bf_3', 'CONFIRMED', 1, { refunds: [{ status: 'DONE', value: 50 }] }),
    charge('pay_bf_4', 'REFUNDED', 1),
    charge('pay_bf_5', 'OVERDUE', 0),
    charge('pay_bf_old', 'RECEIVED', 10), // created before --since 72h: not listed, whatever happened since
  ].map((c) => [c.id, c]),
);

/**
 * GET /v3/payments as Asaas's "Listar cobranças" describes it: dateCreated[ge] (a date), offset,
 * limit, answering { hasMore, totalCount, limit, offset, data }. Pages of PAGE_SIZE whatever the
 * limit asked, so five charges take three pages. GET /v3/payments/{id} serves a refetch.
 */
function asaasApi(gateway: FakeGateway) {
  gateway.rules.push((request: RecordedRequest) => {
    if (request.headers.access_token !== API_KEY) return { status: 401, json: { errors: [{ code: 'invalid_access_token' }] } };
    const byId = /^\/v3\/payments\/([\w]+)$/.exec(request.pathname);
    if (byId) {
      const found = account.get(byId[1]!);
      return found ? { status: 200, json: found } : { status: 404, json: { errors: [{ code: 'not_found' }] } };
    }
    if (request.pathname !== '/v3/payments') return undefined;
    const query = new URL(request.path, 'http://x').searchParams;
    const from = query.get('dateCreated[ge]');
    if (!from || !/^\d{4}-\d{2}-\d{2}$/.test(from)) return { status: 400, json: { errors: [{ description: `dateCreated[ge] is a date: ${from}` }] } };
    const inWindow = [...account.values()].filter((c) => c.dateCreated >= from).reverse();
    const offset = Number(query.get('offset'));
    const data = inWindow.slice(offset, offset + PAGE_SIZE);
    return {
      status: 200,
      json: { object: 'list', hasMore: offset + PAGE_SIZE < inWindow.length, totalCount: inWindow.length, limit: PAGE_SIZE, offset, data },
    };
  });
}

const backfill = useBackfillService(database, {
  provider: 'asaas',
  env: { WEBHOOK_SECRET_ASAAS: 'asaas-backfill-token-0123456789abcdef', GATEWAY_API_KEY_ASAAS: API_KEY },
  serve: asaasApi,
});

const inboxRows = () => database.sql`select event_id, event_type, source, verification from webhook_inbox where provider = ${PROVIDER} order by id`;
const statusesOf = (ids: string[]) => Promise.all(ids.map(async (id) => (await paymentOf(database.sql, id, PROVIDER))?.status));

describe('inboxctl backfill asaas', () => {
  test('stores the webhook each charge created since --since would have sent for its status; a later status is a new event; a second run stores nothing', async () => {
    const first = {
      pay_bf_1: 'PAYMENT_RECEIVED',
      pay_bf_2: 'PAYMENT_CREATED',
      pay_bf_3: 'PAYMENT_PARTIALLY_REFUNDED',
      pay_bf_4: 'PAYMENT_REFUNDED',
      pay_bf_5: 'PAYMENT_OVERDUE',
    };
    const ids = Object.entries(first).map(([charge, event]) => `backfill:${charge}:${event}`);

    const run = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--json'], backfill.env);
    assert.equal(run.code, 1, run.stderr);
    assert.deepEqual(
      { pages: run.json().pages, listed: run.json().listed, stored: run.json().stored, ids: [...run.json().storedEventIds].sort() },
      { pages: 3, listed: 5, stored: 5, ids: [...ids].sort() },
    );
    const settled = await waitUntilSettled(database.sql, ids, 20_000, PROVIDER);
    assert.ok(
      settled.every((row) => row.status === 'processed' && row.attempts === 1),
      JSON.stringify(settled),
    );
    assert.deepEqual(await statusesOf(Object.keys(first)), ['paid', 'pending', 'partially_refunded', 'refunded', 'pending']);
    assert.equal(await paymentOf(database.sql, 'pay_bf_old', PROVIDER), undefined, 'created before --since: not listed');
    for (const row of await inboxRows()) {
      assert.equal(row.source, 'backfill');
      assert.equal(row.verification.scheme, 'gateway-api');
      assert.match(row.verification.endpoint, /^\/v3\/payments\?dateCreated%5Bge%5D=\d{4}-\d{2}-\d{2}&/);
    }

    // pay_bf_2 is paid and pay_bf_6 is new: two events the inbox has not seen.
    account.set('pay_bf_2', charge('pay_bf_2', 'RECEIVED', 2));
    account.set('pay_bf_6', charge('pay_bf_6', 'PENDING', 0));
    const newer = ['backfill:pay_bf_2:PAYMENT_RECEIVED', 'backfill:pay_bf_6:PAYMENT_CREATED'];
    const second = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--json'], backfill.env);
    assert.equal(second.code, 1, second.stderr);
    assert.deepEqual(
      { listed: second.json().listed, alreadyPresent: second.json().alreadyPresent, ids: [...second.json().storedEventIds].sort() },
      { listed: 6, alreadyPresent: 4, ids: newer },
    );
    await waitUntilSettled(database.sql, newer, 20_000, PROVIDER);
    assert.deepEqual(await statusesOf(['pay_bf_2', 'pay_bf_6']), ['paid', 'pending']);

    const third = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--json'], backfill.env);
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual(
      { listed: third.json().listed, alreadyPresent: third.json().alreadyPresent, stored: third.json().stored },
      { listed: 6, alreadyPresent: 6, stored: 0 },
    );
    assert.equal((await inboxRows()).length, 7);
  });
});
