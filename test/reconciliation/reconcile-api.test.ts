import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { useTestDatabase } from '../support/database.ts';
import { startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { balanceTransaction, payout, serveStripeLedger } from './fake-stripe-ledger.ts';
import { daysAgo, insertPayments, useReconcileFixture } from './harness.ts';

const database = useTestDatabase();
const API_KEY = 'sk_test_reconcile_api';
const TOKEN = 'reconcile-api-token-0123456789abcdef';
const fixture = useReconcileFixture(database, { provider: 'stripe', env: { WEBHOOK_SECRET_STRIPE: 'whsec_reconcile_api', GATEWAY_API_KEY_STRIPE: API_KEY } });
let baseUrl = '';
setup(async () => {
  baseUrl = (await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: 'whsec_reconcile_api', INBOX_API_TOKEN: TOKEN, INBOX_DASHBOARD: 'on' } }))
    .baseUrl;
});
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const get = async (path: string) => {
  const response = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

async function component(name: string) {
  const document = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as { components: Record<string, unknown> };
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components });
  return ajv.getSchema(`openapi#/components/schemas/${name}`)!;
}

describe('the API after a payout is reconciled', () => {
  test('GET /api/v1/payouts/:provider/:id lists its entries with their payments; the payment lookup says what settled; both fit the OpenAPI description', async () => {
    serveStripeLedger(
      fixture.gateway,
      {
        transactions: [
          {
            ...balanceTransaction(
              { id: 'txn_api_a', amount: 2000, fee: 88, created: seconds(daysAgo(4)) },
              { object: 'charge', id: 'ch_api_a', paymentIntent: 'pi_api_a' },
            ),
            payout: 'po_api',
          },
          {
            ...balanceTransaction(
              { id: 'txn_api_a_refund', type: 'refund', amount: -500, created: seconds(daysAgo(3)) },
              { object: 'refund', id: 're_api_a', charge: 'ch_api_a', paymentIntent: 'pi_api_a' },
            ),
            payout: 'po_api',
          },
          {
            ...balanceTransaction(
              { id: 'txn_api_b', amount: 700, fee: 50, created: seconds(daysAgo(4)) },
              { object: 'charge', id: 'ch_api_b', paymentIntent: null },
            ),
            payout: 'po_api',
          },
          { ...balanceTransaction({ id: 'txn_po_api', type: 'payout', amount: -2062, created: seconds(daysAgo(2)) }, null), payout: 'po_api' },
        ],
        payouts: [payout({ id: 'po_api', amount: 2062, balance_transaction: 'txn_po_api', arrival_date: seconds(daysAgo(1)) })],
      },
      { apiKey: API_KEY, pageSize: 100 },
    );
    await insertPayments(database.sql, 'stripe', [{ key: 'pi_api_a', status: 'partially_refunded', amount: 2000, refunded: 500, created: daysAgo(4) }]);
    const run = await fixture.reconcile('--provider', 'stripe', '--payout', 'po_api');
    // ch_api_b's payment is unknown to the inbox: a finding, and a null payment below.
    assert.equal(run.code, 1, run.stderr);

    const payoutView = await get('/api/v1/payouts/stripe/po_api');
    assert.equal(payoutView.status, 200);
    assert.deepEqual(payoutView.body.payout.amount, 2062);
    assert.deepEqual(payoutView.body.totals, { gross: 2200, fee: 138, net: 2062 });
    assert.deepEqual(
      payoutView.body.entries.map((e: any) => `${e.entry_id} ${e.kind} ${e.payment?.charge_id ?? null}`),
      ['txn_api_a charge pi_api_a', 'txn_api_b charge null', 'txn_api_a_refund refund pi_api_a'],
    );
    const payoutSchema = await component('Payout');
    assert.ok(payoutSchema(payoutView.body), JSON.stringify(payoutSchema.errors));

    const paymentView = await get('/api/v1/payments/stripe/pi_api_a');
    assert.equal(paymentView.status, 200);
    const { settlement } = paymentView.body;
    assert.deepEqual(
      { ...settlement, available_at: undefined },
      {
        gross: 2000,
        fee: 88,
        net: 1412,
        refunded: 500,
        charged_back: 0,
        currency: 'usd',
        available_at: undefined,
        payout_ids: ['po_api'],
        entry_ids: ['txn_api_a', 'txn_api_a_refund'],
      },
    );
    const paymentSchema = await component('Payment');
    assert.ok(paymentSchema(paymentView.body), JSON.stringify(paymentSchema.errors));

    assert.equal((await get('/api/v1/payouts/stripe/po_never_read')).status, 404);
    assert.equal((await get('/api/v1/payouts/stripe/po_never_read')).body.error.code, 'payout_not_found');
  });

  test('the dashboard lists the open findings, each explained, with the run that found them', async () => {
    const page = await (await fetch(`${baseUrl}/dashboard/findings`)).text();
    assert.match(page, /<tr data-kind="credit_without_payment">/);
    assert.match(page, /credit_without_payment: ledger entry txn_api_b .* a webhook that never came\. Fetch it with `inboxctl backfill stripe --since /);
    assert.match(page, /payout <code>po_api<\/code>/);
    // Whose ledger each run read: the platform's here; a run on a connected account's behalf names it.
    assert.match(page, /<th>account<\/th>/);
    assert.match(page, /<td><span class="muted">platform<\/span><\/td>/);
    await database.sql`
      insert into reconciliation_runs (provider, scope, account, since, until, status, started_at, finished_at, error)
      values ('stripe', 'window', 'acct_1Shop', now() - interval '1 day', now(), 'partial', now(), now(), 'the gateway answered 403')`;
    const withAccount = await (await fetch(`${baseUrl}/dashboard/findings`)).text();
    assert.match(withAccount, /<td><code>acct_1Shop<\/code><\/td>.*partial/s);
    const overview = await (await fetch(`${baseUrl}/dashboard`)).text();
    assert.match(overview, /href="\/dashboard\/findings"/);
  });
});
