import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { drizzleExecutor } from '../../src/db/client.ts';
import { settlementOf } from '../../src/reconciliation/settlement.ts';
import { selectEntriesOfPayment } from '../../src/reconciliation/sql/ledger-entries.ts';
import { useTestDatabase } from '../support/database.ts';
import type { RecordedRequest } from '../support/fake-gateway.ts';
import { type JsonRun, daysAgo, insertPayments, kindsAndSubjects, useReconcileFixture } from './harness.ts';

const database = useTestDatabase();
const API_KEY = '$aact_reconcile_test_key';
const fixture = useReconcileFixture(database, { provider: 'asaas', env: { WEBHOOK_SECRET_ASAAS: 'asaas-webhook-token', GATEWAY_API_KEY_ASAAS: API_KEY } });
const PAGE = 3;
const day = (date: Date) => new Date(date.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);

/** One statement line as docs.asaas.com "Recuperar extrato" shows it: reais as decimals, a São Paulo date, the payment it belongs to. */
const line = (id: string, type: string, value: number | string, date: Date, paymentId: string | null, description: string) => ({
  object: 'financialTransaction',
  id,
  value,
  balance: 0,
  type,
  date: day(date),
  description,
  paymentId,
});

/** A card payment as GET /v3/payments/{id} answers it (docs.asaas.com "Recuperar uma única cobrança"): its net value and credit dates. */
const cardPayment = (id: string, value: number, netValue: number, estimatedCreditDate: Date, creditDate: Date | null) => ({
  object: 'payment',
  id,
  dateCreated: day(daysAgo(40)),
  customer: 'cus_000005219613',
  value,
  netValue,
  billingType: 'CREDIT_CARD',
  status: 'CONFIRMED',
  confirmedDate: day(daysAgo(40)),
  creditDate: creditDate === null ? null : day(creditDate),
  estimatedCreditDate: day(estimatedCreditDate),
  deleted: false,
  anticipated: false,
  refunds: null,
});

/**
 * Asaas `GET /v3/financialTransactions`: `startDate`/`finishDate` (days, both included),
 * `offset`/`limit`, answering `{ object: "list", hasMore, totalCount, limit, offset, data }`; the
 * `access_token` header. The page at offset 3 is answered 429 with Retry-After once.
 */
function serveStatement(lines: ReturnType<typeof line>[], payments: Record<string, unknown> = {}) {
  let rateLimited = false;
  fixture.gateway.rules.push((request: RecordedRequest) => {
    if (request.headers.access_token !== API_KEY)
      return { status: 401, json: { errors: [{ code: 'invalid_access_token', description: 'A chave de API fornecida é inválida' }] } };
    const payment = /^\/v3\/payments\/([^/]+)$/.exec(request.pathname);
    if (payment)
      return payments[payment[1]!]
        ? { status: 200, json: payments[payment[1]!] }
        : { status: 404, json: { errors: [{ code: 'invalid_action', description: 'Cobrança não encontrada.' }] } };
    if (request.pathname !== '/v3/financialTransactions') return undefined;
    const query = new URL(request.path, 'http://x').searchParams;
    const offset = Number(query.get('offset'));
    const limit = Number(query.get('limit'));
    if (offset === PAGE && !rateLimited) {
      rateLimited = true;
      return { status: 429, headers: { 'retry-after': '1' }, json: { errors: [{ code: 'too_many_requests', description: 'Too many requests' }] } };
    }
    const inWindow = lines.filter((l) => l.date >= query.get('startDate')! && l.date <= query.get('finishDate')!);
    // Asaas answers at most `limit`; this fake pages by PAGE to make the pages short.
    const data = inWindow.slice(offset, offset + Math.min(limit, PAGE));
    return { status: 200, json: { object: 'list', hasMore: offset + data.length < inWindow.length, totalCount: inWindow.length, limit, offset, data } };
  });
}

describe('inboxctl reconcile --provider asaas', () => {
  test('the statement, paged by offset with a 429 waited out: fee lines belong to their payment, each discrepancy is a finding, and a card payment is missing only once its own credit date has passed', async () => {
    serveStatement(
      [
        line('ft_1_received', 'PAYMENT_RECEIVED', 100.0, daysAgo(20), 'pay_ok', 'Cobrança recebida - fatura nr. 1'),
        line('ft_1_fee', 'PAYMENT_FEE', -1.99, daysAgo(20), 'pay_ok', 'Taxa do boleto - fatura nr. 1'),
        line('ft_2_received', 'PAYMENT_RECEIVED', 49.9, daysAgo(18), 'pay_refund', 'Cobrança recebida - fatura nr. 2'),
        line('ft_2_reversal', 'PAYMENT_REVERSAL', -49.9, daysAgo(12), 'pay_refund', 'Estorno da cobrança - fatura nr. 2'),
        line('ft_ghost', 'PAYMENT_RECEIVED', 10.5, daysAgo(11), 'pay_ghost', 'Cobrança recebida - fatura nr. 3'),
        line('ft_transfer', 'TRANSFER', -90.0, daysAgo(10), null, 'Transferência para conta bancária'),
        line('ft_bad', 'PAYMENT_RECEIVED', 'R$ 12,00', daysAgo(9), 'pay_bad', 'Cobrança recebida - fatura nr. 4'),
      ],
      {
        // Its credit date has passed: the missing credit is a finding, with what Asaas expected.
        pay_card_lost: cardPayment('pay_card_lost', 30, 29.01, daysAgo(8), null),
        // Paid 40 days ago in installments: the one due is credited in a week, not yet missing.
        pay_card_installment: cardPayment('pay_card_installment', 30, 29.01, daysAgo(-7), null),
      },
    );
    await insertPayments(database.sql, 'asaas', [
      { key: 'pay_ok', status: 'paid', amount: 10000, currency: 'BRL', created: daysAgo(21) },
      { key: 'pay_refund', status: 'paid', amount: 4990, currency: 'BRL', created: daysAgo(19) },
      // A card payment paid 40 days ago: past the 35-day card settlement, never credited.
      { key: 'pay_card_lost', status: 'paid', amount: 3000, currency: 'BRL', created: daysAgo(40) },
      // Paid 10 days ago by card: its credit (D+30) is not due yet.
      { key: 'pay_card_waiting', status: 'paid', amount: 3000, currency: 'BRL', created: daysAgo(10) },
      { key: 'pay_card_installment', status: 'paid', amount: 3000, currency: 'BRL', created: daysAgo(40) },
    ]);
    const result = await fixture.reconcile('--provider', 'asaas', '--since', '45d', '--json');
    assert.equal(result.code, 1, result.stderr);
    const runs = result.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual(kindsAndSubjects(runs), [
      'credit_without_payment ft_ghost',
      'missing_credit pay_card_lost',
      'refund_not_on_payment pay_refund',
      'unreadable_entry ft_bad',
    ]);
    assert.deepEqual([runs[0]!.run.pages, runs[0]!.run.entriesRead, runs[0]!.rateLimitedWaits, runs[0]!.gatewayCalls], [3, 7, 1, 6]);
    const statement = fixture.gateway.requests.filter((r) => r.pathname === '/v3/financialTransactions');
    assert.deepEqual(
      statement.map((r) => new URL(r.path, 'http://x').searchParams.get('offset')),
      ['0', '3', '3', '6'],
    );
    // Only the two payments past the delay with no credit were looked up.
    assert.deepEqual(
      fixture.gateway.requests
        .filter((r) => r.pathname.startsWith('/v3/payments/'))
        .map((r) => r.pathname)
        .sort(),
      ['/v3/payments/pay_card_installment', '/v3/payments/pay_card_lost'],
    );
    const lost = runs[0]!.findings.find((f) => f.kind === 'missing_credit')!;
    assert.deepEqual(lost.evidence.gatewaySays, {
      netAmount: 2901,
      expectedCreditAt: new Date(`${day(daysAgo(8))}T03:00:00Z`).toISOString(),
      creditedAt: null,
    });
    const settled = settlementOf(await selectEntriesOfPayment(drizzleExecutor(database.connect('reconcile-asaas').db), 'asaas', ['pay_ok']));
    assert.deepEqual([settled.gross, settled.fee, settled.net, settled.currency], [10000, 199, 9801, 'BRL']);
  });
});
