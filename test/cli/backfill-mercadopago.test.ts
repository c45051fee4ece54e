import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import type { FakeGateway, RecordedRequest } from '../support/fake-gateway.ts';
import { paymentOf, transitionsOf, waitUntilSettled } from '../processing/harness.ts';
import { useBackfillService } from './backfill-fixture.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
const API_KEY = 'APP_USR-backfill-cli-test';
const SECRET = 'mp_backfill_secret';
const PAGE_SIZE = 2;
const PROVIDER = 'mercadopago';

/** Mercado Pago's way of writing a time: milliseconds and the account's offset (here -04:00). */
function mpTime(hoursAgo: number): string {
  const local = new Date(Date.now() - hoursAgo * 3_600_000 - 4 * 3_600_000);
  return local.toISOString().replace('Z', '-04:00');
}

interface Payment {
  id: number;
  status: string;
  transaction_amount: number;
  transaction_amount_refunded: number;
  currency_id: string;
  date_created: string;
  date_last_updated: string;
}

function payment(id: number, status: string, createdHoursAgo: number, updatedHoursAgo = createdHoursAgo): Payment {
  return {
    id,
    status,
    transaction_amount: 150.25,
    transaction_amount_refunded: status === 'refunded' ? 150.25 : 0,
    currency_id: 'BRL',
    date_created: mpTime(createdHoursAgo),
    date_last_updated: mpTime(updatedHoursAgo),
  };
}

// What the Mercado Pago account holds, by payment id. The test changes it between runs.
const account = new Map<number, Payment>(
  [
    payment(9001, 'approved', 60),
    payment(9002, 'pending', 50),
    payment(9003, 'rejected', 40, 39),
    payment(9004, 'approved', 200, 20), // created long ago, changed in the window: listed
    payment(9005, 'in_process', 5),
    payment(9006, 'approved', 100), // last changed before --since 72h: not listed
  ].map((p) => [p.id, p]),
);

const noticeId = (p: Payment) => `backfill:${p.id}:${new Date(p.date_last_updated).toISOString()}`;

/**
 * GET /v1/payments/search as the API reference and devsite-docs example describe it:
 * range=date_last_updated with begin_date/end_date, sort + criteria=desc, offset/limit, answering
 * { paging: { total, limit, offset }, results }. Pages of PAGE_SIZE whatever the limit asked (a
 * shorter page is allowed), so five payments take three pages. GET /v1/payments/{id} is the refetch.
 */
function mercadoPagoApi(gateway: FakeGateway) {
  gateway.rules.push((request: RecordedRequest) => {
    if (request.headers.authorization !== `Bearer ${API_KEY}`) return { status: 401, json: { message: 'invalid access token' } };
    const byId = /^\/v1\/payments\/(\d+)$/.exec(request.pathname);
    if (byId) {
      const found = account.get(Number(byId[1]));
      return found ? { status: 200, json: found } : { status: 404, json: { message: 'Payment not found' } };
    }
    if (request.pathname !== '/v1/payments/search') return undefined;
    const query = new URL(request.path, 'http://x').searchParams;
    const filter = [query.get('range'), query.get('sort'), query.get('criteria'), query.get('end_date')].join(' ');
    if (filter !== 'date_last_updated date_last_updated desc NOW')
      return { status: 400, json: { message: `this fake lists by last update, newest first, up to NOW; asked: ${filter}` } };
    const begin = Date.parse(query.get('begin_date')!);
    const inWindow = [...account.values()]
      .filter((p) => Date.parse(p.date_last_updated) >= begin)
      .sort((a, b) => Date.parse(b.date_last_updated) - Date.parse(a.date_last_updated));
    const offset = Number(query.get('offset'));
    return { status: 200, json: { paging: { total: inWindow.length, limit: PAGE_SIZE, offset }, results: inWindow.slice(offset, offset + PAGE_SIZE) } };
  });
}

// Mercado Pago's default ordering: every notice is refetched from the same fake API.
const backfill = useBackfillService(database, {
  provider: 'mercadopago',
  env: { WEBHOOK_SECRET_MERCADOPAGO: SECRET, GATEWAY_API_KEY_MERCADOPAGO: API_KEY },
  serve: mercadoPagoApi,
});

/** A payment notice as Mercado Pago delivers it, signed per its docs' manifest (id;request-id;ts) with node:crypto. */
async function deliverNotice(noticeId: number, paymentId: number) {
  const body = JSON.stringify({
    action: 'payment.created',
    api_version: 'v1',
    data: { id: String(paymentId) },
    date_created: mpTime(5),
    id: noticeId,
    live_mode: false,
    type: 'payment',
    user_id: 724484980,
  });
  const ts = String(Date.now());
  const requestId = `req-${noticeId}`;
  const v1 = createHmac('sha256', SECRET).update(`id:${paymentId};request-id:${requestId};ts:${ts};`).digest('hex');
  const headers = { 'content-type': 'application/json', 'x-signature': `ts=${ts},v1=${v1}`, 'x-request-id': requestId };
  const response = await fetch(`${backfill.baseUrl}/webhooks/mercadopago?data.id=${paymentId}&type=payment`, { method: 'POST', body, headers });
  assert.equal(response.status, 200, await response.text());
}

const backfillRows = () => database.sql`select event_id, source, status, attempts, verification from webhook_inbox where provider = ${PROVIDER} order by id`;
const refetchesOf = (id: number) => backfill.gateway.requests.filter((r) => r.pathname === `/v1/payments/${id}`).length;

describe('inboxctl backfill mercadopago', () => {
  test('stores one notice per payment changed since --since, refetched once each; a later change is a new notice; a second run stores nothing', async () => {
    const listed = [9005, 9004, 9003, 9002, 9001].map((id) => noticeId(account.get(id)!));
    // Payment 9005's creation was delivered: the inbox knows it, under Mercado Pago's notice id.
    await deliverNotice(77001, 9005);
    await waitUntilSettled(database.sql, ['77001'], 20_000, PROVIDER);

    const dry = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--dry-run', '--json'], backfill.env);
    assert.equal(dry.code, 1, dry.stderr);
    assert.deepEqual(
      { ...dry.json<Record<string, unknown>>(), since: undefined },
      {
        provider: PROVIDER,
        dryRun: true,
        pages: 3,
        listed: 5,
        alreadyPresent: 0,
        stored: 5,
        storedEventIds: [...listed].reverse(),
        rateLimitedWaits: 0,
        refused: [],
        since: undefined,
      },
    );
    assert.equal((await backfillRows()).length, 1, 'the dry run stored nothing');

    const run = await runInboxctl(['backfill', PROVIDER, '--since', '72h'], backfill.env);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.out, /3 pages read/);
    assert.match(run.out, /listed 5, already present 0, stored 5/);
    const settled = await waitUntilSettled(database.sql, listed, 20_000, PROVIDER);
    // The delivered notice's id is Mercado Pago's: the backfill's notice for the same change is one
    // more refetch, which finds the state the inbox has and changes nothing (so it is ignored).
    const repeated = noticeId(account.get(9005)!);
    assert.deepEqual(
      Object.fromEntries(settled.map((row) => [row.eventId, [row.status, row.attempts]])),
      Object.fromEntries(listed.map((id) => [id, [id === repeated ? 'ignored' : 'processed', 1]])),
    );
    for (const id of [9001, 9002, 9003, 9004]) assert.equal(refetchesOf(id), 1, `payment ${id} refetched once`);
    assert.equal(refetchesOf(9005), 2);
    assert.equal((await transitionsOf(database.sql, '9005', PROVIDER)).length, 1, 'payment 9005: one transition (to pending), not two');
    assert.equal(refetchesOf(9006), 0, 'changed before --since: not listed, not refetched');
    assert.deepEqual(await Promise.all([9001, 9002, 9003, 9004, 9005].map(async (id) => (await paymentOf(database.sql, String(id), PROVIDER))?.status)), [
      'paid',
      'pending',
      'failed',
      'paid',
      'pending',
    ]);
    for (const row of (await backfillRows()).slice(1)) {
      assert.equal(row.source, 'backfill');
      assert.equal(row.verification.scheme, 'gateway-api');
      assert.match(row.verification.endpoint, /^\/v1\/payments\/search\?/);
    }

    // Payment 9001 is refunded and payment 9007 is new: two changes the inbox has not seen.
    account.set(9001, { ...account.get(9001)!, status: 'refunded', transaction_amount_refunded: 150.25, date_last_updated: mpTime(1) });
    account.set(9007, payment(9007, 'approved', 0.5));
    const newer = [noticeId(account.get(9007)!), noticeId(account.get(9001)!)];
    const second = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--json'], backfill.env);
    assert.equal(second.code, 1, second.stderr);
    assert.deepEqual(
      {
        listed: second.json().listed,
        alreadyPresent: second.json().alreadyPresent,
        stored: second.json().stored,
        ids: [...second.json().storedEventIds].sort(),
      },
      { listed: 6, alreadyPresent: 4, stored: 2, ids: [...newer].sort() },
    );
    await waitUntilSettled(database.sql, newer, 20_000, PROVIDER);
    assert.equal((await paymentOf(database.sql, '9001', PROVIDER))?.status, 'refunded');
    assert.equal((await paymentOf(database.sql, '9007', PROVIDER))?.status, 'paid');
    assert.equal(refetchesOf(9004), 1, 'a payment already backfilled at this change is not stored again');

    const third = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--json'], backfill.env);
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual(
      { listed: third.json().listed, alreadyPresent: third.json().alreadyPresent, stored: third.json().stored },
      { listed: 6, alreadyPresent: 6, stored: 0 },
    );
    assert.deepEqual(
      (await backfillRows()).map((r) => r.source),
      ['webhook', ...Array(7).fill('backfill')],
    );
  });

  test('a payment changed while the run pages moves the offset list on by one: the payment seen on two pages is listed and counted once', async () => {
    account.set(9008, payment(9008, 'approved', 0.3));
    account.set(9009, payment(9009, 'approved', 0.2));
    // Between the first page and the second, payment 9010 changes: the list grows at its head, so
    // the second page starts with the first page's last payment again.
    const shift = (request: RecordedRequest) => {
      if (request.pathname === '/v1/payments/search' && new URL(request.path, 'http://x').searchParams.get('offset') === String(PAGE_SIZE))
        account.set(9010, payment(9010, 'approved', 0.1));
      return undefined;
    };
    backfill.gateway.rules.unshift(shift);
    try {
      const dry = await runInboxctl(['backfill', PROVIDER, '--since', '72h', '--dry-run', '--json'], backfill.env);
      assert.equal(dry.code, 1, dry.stderr);
      assert.deepEqual(
        { listed: dry.json().listed, alreadyPresent: dry.json().alreadyPresent, stored: dry.json().stored, ids: dry.json().storedEventIds },
        { listed: 8, alreadyPresent: 6, stored: 2, ids: [noticeId(account.get(9008)!), noticeId(account.get(9009)!)] },
      );
    } finally {
      backfill.gateway.rules.splice(backfill.gateway.rules.indexOf(shift), 1);
    }
  });
});
