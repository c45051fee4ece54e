import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import type { RecordedRequest } from '../support/fake-gateway.ts';
import { type JsonRun, daysAgo, insertPayments, kindsAndSubjects, useReconcileFixture } from './harness.ts';

const database = useTestDatabase();
const API_KEY = 'sk_test_reconcile_pagarme';
const fixture = useReconcileFixture(database, { provider: 'pagarme', env: { GATEWAY_API_KEY_PAGARME: API_KEY } });
const PAGE_SIZE = 100;
let nextId = 11814386;

/**
 * A v5 payable as docs.pagar.me "Recebíveis" and pagarme-nodejs-sdk GetPayableResponse give it:
 * integer centavos, the charge it belongs to, one per installment.
 */
function payable(fields: { type: string; amount: number; fee: number; chargeId: string; created: Date; installment?: number; status?: string }) {
  const id = nextId++;
  return {
    id,
    status: fields.status ?? 'waiting_funds',
    amount: fields.amount,
    fee: fields.fee,
    anticipation_fee: 0,
    fraud_coverage_fee: 0,
    installment: fields.installment ?? 1,
    gateway_id: String(9842817 + id),
    charge_id: fields.chargeId,
    split_id: null,
    bulk_anticipation_id: null,
    anticipation_id: null,
    recipient_id: 're_cjsklmm5k00qu2j6exqej7tss',
    originator_model: 'charge',
    originator_model_id: fields.chargeId,
    payment_date: new Date(fields.created.getTime() + 30 * 86_400_000 * (fields.installment ?? 1)).toISOString(),
    original_payment_date: null,
    type: fields.type,
    payment_method: 'credit_card',
    accrual_at: fields.created.toISOString(),
    created_at: fields.created.toISOString(),
    liquidation_arrangement_id: null,
    settlement_id: null,
    payment_profile_id: null,
  };
}

/**
 * Pagar.me `GET /core/v5/payables` with `created_since`/`created_until`, paged by `page`/`size`,
 * answering `{ data, paging: { total, previous, next } }` (next: the URL of the next page, absent on
 * the last); HTTP Basic with the secret key. Page 2 is answered 429 with Retry-After once.
 */
function servePayables(payables: ReturnType<typeof payable>[]) {
  let rateLimited = false;
  const basic = `Basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`;
  fixture.gateway.rules.push((request: RecordedRequest) => {
    if (request.headers.authorization !== basic) return { status: 401, json: { message: 'Authorization has been denied for this request.' } };
    if (request.pathname !== '/core/v5/payables') return undefined;
    const query = new URL(request.path, 'http://x').searchParams;
    const page = Number(query.get('page') ?? '1');
    const size = Number(query.get('size') ?? '10');
    if (page === 2 && !rateLimited) {
      rateLimited = true;
      return { status: 429, headers: { 'retry-after': '1' }, json: { message: 'Too Many Requests' } };
    }
    const inWindow = payables.filter((p) => p.created_at >= query.get('created_since')! && p.created_at <= query.get('created_until')!);
    const data = inWindow.slice((page - 1) * size, page * size);
    const link = (n: number) => `https://api.pagar.me/core/v5/payables?page=${n}&size=${size}`;
    const paging = {
      total: inWindow.length,
      ...(page > 1 ? { previous: link(page - 1) } : {}),
      ...(page * size < inWindow.length ? { next: link(page + 1) } : {}),
    };
    return { status: 200, json: { data, paging } };
  });
}

describe('inboxctl reconcile --provider pagarme', () => {
  test('payables over two pages (a 429 waited out): installments add up to their charge, a refund payable matches the payment, a chargeback the payment does not show is a finding', async () => {
    // 120 single-installment charges that match: more than one page of 100.
    const matching = Array.from({ length: 120 }, (_, i) => ({ chargeId: `ch_ok_${i}`, amount: 1000 + i }));
    const payables = [
      ...matching.map((m) => payable({ type: 'credit', amount: m.amount, fee: 45, chargeId: m.chargeId, created: daysAgo(6) })),
      // Three installments of one charge.
      ...[1, 2, 3].map((installment) => payable({ type: 'credit', amount: 10000, fee: 379, chargeId: 'ch_installments', created: daysAgo(5), installment })),
      payable({ type: 'credit', amount: 5000, fee: 190, chargeId: 'ch_refunded', created: daysAgo(5) }),
      payable({ type: 'refund', amount: -5000, fee: 0, chargeId: 'ch_refunded', created: daysAgo(4) }),
      payable({ type: 'credit', amount: 8000, fee: 304, chargeId: 'ch_disputed', created: daysAgo(5) }),
      payable({ type: 'chargeback', amount: -8000, fee: 0, chargeId: 'ch_disputed', created: daysAgo(3) }),
    ];
    servePayables(payables);
    await insertPayments(database.sql, 'pagarme', [
      ...matching.map((m) => ({ key: m.chargeId, status: 'paid', amount: m.amount, currency: 'BRL', created: daysAgo(6) })),
      { key: 'ch_installments', status: 'paid', amount: 30000, currency: 'BRL', created: daysAgo(5) },
      { key: 'ch_refunded', status: 'refunded', amount: 5000, refunded: 5000, currency: 'BRL', created: daysAgo(5) },
      { key: 'ch_disputed', status: 'paid', amount: 8000, currency: 'BRL', created: daysAgo(5) },
    ]);
    const result = await fixture.reconcile('--provider', 'pagarme', '--since', '7d', '--json');
    assert.equal(result.code, 1, result.stderr);
    const runs = result.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual(kindsAndSubjects(runs), ['chargeback_not_on_payment ch_disputed']);
    assert.deepEqual([runs[0]!.run.pages, runs[0]!.run.entriesRead, runs[0]!.rateLimitedWaits], [2, 127, 1]);
    const pages = fixture.gateway.requests.map((r) => new URL(r.path, 'http://x').searchParams.get('page'));
    assert.deepEqual(pages, ['1', '2', '2']);
    assert.equal(new URL(fixture.gateway.requests[0]!.path, 'http://x').searchParams.get('size'), String(PAGE_SIZE));
    const [stored] = await database.sql`select count(*)::int as n, sum(fee)::int as fees from ledger_entries where provider = 'pagarme'`;
    assert.deepEqual([stored!.n, stored!.fees], [127, 120 * 45 + 3 * 379 + 190 + 304]);
  });
});
