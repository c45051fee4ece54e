import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { type JsonRun, daysAgo, insertPayments, kindsAndSubjects, useReconcileFixture } from '../reconciliation/harness.ts';

const database = useTestDatabase();
const ROOT_KEY = '$aact_reconcile_root_key';
const SHOP_KEY = '$aact_reconcile_loja_a_key';
const fixture = useReconcileFixture(database, {
  provider: 'asaas',
  env: { WEBHOOK_SECRET_ASAAS: 'asaas-root-webhook-token-0123456789abcdef', GATEWAY_API_KEY_ASAAS: ROOT_KEY },
  providerConfig: { accounts: [{ id: 'loja-a', token: 'asaas-loja-a-webhook-token-0123456789abcdef', apiKey: SHOP_KEY }] },
});
const day = (date: Date) => new Date(date.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);
const received = (id: string, value: number, date: Date, paymentId: string) => ({
  object: 'financialTransaction',
  id,
  value,
  balance: 0,
  type: 'PAYMENT_RECEIVED',
  date: day(date),
  description: 'Cobrança recebida',
  paymentId,
});

/**
 * Each Asaas account's statement and payments, answered only to that account's own key (a
 * subaccount is an Asaas account of its own: another key does not see them).
 */
function serveAccounts(accounts: Record<string, { lines: ReturnType<typeof received>[]; payments: Record<string, unknown> }>) {
  fixture.gateway.rules.push((request) => {
    const account = accounts[String(request.headers.access_token)];
    if (!account) return { status: 401, json: { errors: [{ code: 'invalid_access_token', description: 'A chave de API fornecida é inválida' }] } };
    const payment = /^\/v3\/payments\/([^/]+)$/.exec(request.pathname);
    if (payment) {
      const found = account.payments[payment[1]!];
      return found ? { status: 200, json: found } : { status: 404, json: { errors: [{ code: 'invalid_action', description: 'Cobrança não encontrada.' }] } };
    }
    if (request.pathname !== '/v3/financialTransactions') return undefined;
    const query = new URL(request.path, 'http://x').searchParams;
    const data = account.lines.filter((l) => l.date >= query.get('startDate')! && l.date <= query.get('finishDate')!);
    return { status: 200, json: { object: 'list', hasMore: false, totalCount: data.length, limit: 100, offset: 0, data } };
  });
}

describe('inboxctl reconcile of an Asaas subaccount', () => {
  test("the root's run leaves the subaccount's payments out; the subaccount's run reads its statement and payments with its own key and finds its missing credit", async () => {
    serveAccounts({
      [ROOT_KEY]: { lines: [received('ft_root', 100, daysAgo(40), 'pay_root')], payments: {} },
      [SHOP_KEY]: {
        lines: [received('ft_shop', 50, daysAgo(40), 'pay_shop')],
        payments: {
          pay_shop_lost: {
            object: 'payment',
            id: 'pay_shop_lost',
            value: 30,
            netValue: 29.01,
            billingType: 'PIX',
            status: 'RECEIVED',
            estimatedCreditDate: day(daysAgo(39)),
            creditDate: null,
          },
        },
      },
    });
    await insertPayments(database.sql, 'asaas', [
      { key: 'pay_root', status: 'paid', amount: 10000, currency: 'BRL', created: daysAgo(40) },
      { key: 'pay_shop', status: 'paid', amount: 5000, currency: 'BRL', created: daysAgo(40), account: 'loja-a' },
      { key: 'pay_shop_lost', status: 'paid', amount: 3000, currency: 'BRL', created: daysAgo(40), account: 'loja-a' },
    ]);
    const root = await fixture.reconcile('--provider', 'asaas', '--since', '45d', '--json');
    assert.equal(root.code, 0, root.stderr);
    assert.deepEqual(kindsAndSubjects(root.json<{ runs: JsonRun[] }>().runs), []);
    assert.deepEqual([...new Set(fixture.gateway.requests.map((r) => r.headers.access_token))], [ROOT_KEY]);

    const before = fixture.gateway.requests.length;
    const shop = await fixture.reconcile('--provider', 'asaas', '--account', 'loja-a', '--since', '45d', '--json');
    assert.equal(shop.code, 1, shop.stderr);
    const runs = shop.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual(kindsAndSubjects(runs), ['missing_credit pay_shop_lost']);
    // Looked up with the subaccount's key too: Asaas's own word on when it settles is in the finding.
    assert.deepEqual((runs[0]!.findings[0]!.evidence as { gatewaySays?: { netAmount: number } }).gatewaySays?.netAmount, 2901);
    assert.deepEqual([...new Set(fixture.gateway.requests.slice(before).map((r) => r.headers.access_token))], [SHOP_KEY]);

    const unknown = await fixture.reconcile('--provider', 'asaas', '--account', 'loja-b');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no account "loja-b"/);
  });
});
