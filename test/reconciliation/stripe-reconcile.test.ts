import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { type StripeAccount, balanceTransaction, payout, serveStripeLedger } from './fake-stripe-ledger.ts';
import { type JsonRun, daysAgo, insertPayments, kindsAndSubjects, useReconcileFixture } from './harness.ts';

const database = useTestDatabase();
const API_KEY = 'sk_test_reconcile_stripe';
const fixture = useReconcileFixture(database, { provider: 'stripe', env: { WEBHOOK_SECRET_STRIPE: 'whsec_reconcile', GATEWAY_API_KEY_STRIPE: API_KEY } });
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const charge = (id: string, paymentIntent: string | null) => ({ object: 'charge' as const, id, paymentIntent });

/**
 * A month where everything matches: charges credited with their fees, a partial refund in the
 * ledger and on the payment, a Charges-API payment keyed by its charge id, Stripe's own fee
 * entry (no payment), and a payout whose entries add up to it.
 */
const matchingMonth: StripeAccount = {
  transactions: [
    balanceTransaction({ id: 'txn_ok_1', amount: 2000, fee: 88, created: seconds(daysAgo(20)) }, charge('ch_ok_1', 'pi_ok_1')),
    balanceTransaction({ id: 'txn_ok_2', amount: 5000, fee: 175, created: seconds(daysAgo(15)) }, charge('ch_ok_2', 'pi_ok_2')),
    balanceTransaction(
      { id: 'txn_ok_2_refund', type: 'refund', reporting_category: 'refund', amount: -1500, created: seconds(daysAgo(10)) },
      { object: 'refund', id: 're_ok_2', charge: 'ch_ok_2', paymentIntent: 'pi_ok_2' },
    ),
    balanceTransaction({ id: 'txn_ok_legacy', amount: 700, fee: 50, created: seconds(daysAgo(9)) }, charge('ch_ok_legacy', null)),
    balanceTransaction({ id: 'txn_fee', type: 'stripe_fee', reporting_category: 'fee', amount: -300, created: seconds(daysAgo(5)) }, null),
  ],
  payouts: [],
};

describe('inboxctl reconcile --provider stripe', () => {
  test('a month where everything matches: no finding, exit 0, every entry in the ledger once', async () => {
    serveStripeLedger(fixture.gateway, matchingMonth, { apiKey: API_KEY, pageSize: 2 });
    await insertPayments(database.sql, 'stripe', [
      { key: 'pi_ok_1', status: 'paid', amount: 2000, created: daysAgo(20) },
      { key: 'pi_ok_2', status: 'partially_refunded', amount: 5000, refunded: 1500, created: daysAgo(15) },
      { key: 'ch_ok_legacy', status: 'paid', amount: 700, created: daysAgo(9) },
      // Paid yesterday: within Stripe's settlement delay, no credit expected yet.
      { key: 'pi_ok_recent', status: 'paid', amount: 900, created: daysAgo(1) },
    ]);
    const result = await fixture.reconcile('--provider', 'stripe', '--since', '30d', '--json');
    assert.equal(result.code, 0, result.stderr);
    const [run] = result.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual(run!.findings, []);
    assert.equal(run!.run.status, 'complete');
    assert.deepEqual([run!.run.pages, run!.run.entriesRead, run!.run.entriesNew], [3, 5, 5]);
    const rows =
      await database.sql`select entry_id, kind, payment_key, charge_id, amount::int, fee::int, net::int, currency from ledger_entries order by entry_id`;
    assert.deepEqual(
      rows.map((r) => `${r.entry_id} ${r.kind} ${r.payment_key} ${r.amount}/${r.fee}/${r.net} ${r.currency}`),
      [
        'txn_fee fee null -300/0/-300 usd',
        'txn_ok_1 charge pi_ok_1 2000/88/1912 usd',
        'txn_ok_2 charge pi_ok_2 5000/175/4825 usd',
        'txn_ok_2_refund refund pi_ok_2 -1500/0/-1500 usd',
        'txn_ok_legacy charge ch_ok_legacy 700/50/650 usd',
      ],
    );
    // Every request asked for the sources expanded, and a request names the API key only in its header.
    assert.ok(fixture.gateway.requests.every((r) => r.path.includes('expand%5B%5D=data.source')));
  });

  test('each discrepancy is a finding from the story that should produce it; found again it is the same row, and a backfilled payment resolves its finding', async () => {
    const account: StripeAccount = {
      transactions: [
        // A credit for a PaymentIntent the inbox never heard of: a webhook that never came.
        balanceTransaction({ id: 'txn_ghost', amount: 1234, fee: 66, created: seconds(daysAgo(8)) }, charge('ch_ghost', 'pi_ghost')),
        balanceTransaction({ id: 'txn_amt', amount: 4000, fee: 146, created: seconds(daysAgo(8)) }, charge('ch_amt', 'pi_amt')),
        balanceTransaction({ id: 'txn_ref', amount: 3000, fee: 117, created: seconds(daysAgo(8)) }, charge('ch_ref', 'pi_ref')),
        balanceTransaction(
          { id: 'txn_ref_out', type: 'refund', reporting_category: 'refund', amount: -1000, created: seconds(daysAgo(7)) },
          { object: 'refund', id: 're_ref', charge: 'ch_ref', paymentIntent: 'pi_ref' },
        ),
        balanceTransaction({ id: 'txn_ref2', amount: 3000, fee: 117, created: seconds(daysAgo(8)) }, charge('ch_ref2', 'pi_ref2')),
        balanceTransaction({ id: 'txn_cb', amount: 2500, fee: 103, created: seconds(daysAgo(8)) }, charge('ch_cb', 'pi_cb')),
        balanceTransaction(
          { id: 'txn_cb_dispute', type: 'adjustment', reporting_category: 'dispute', amount: -2500, fee: 1500, created: seconds(daysAgo(6)) },
          { object: 'dispute', id: 'dp_cb', charge: 'ch_cb', paymentIntent: 'pi_cb' },
        ),
        balanceTransaction({ id: 'txn_cb2', amount: 2500, fee: 103, created: seconds(daysAgo(8)) }, charge('ch_cb2', 'pi_cb2')),
        // An amount in dollars as text: not an entry this reader can trust.
        {
          transaction: {
            ...balanceTransaction({ id: 'txn_bad', amount: 0, created: seconds(daysAgo(8)) }, null).transaction,
            amount: '12.50' as unknown as number,
          },
          source: null,
        },
        // An id too long for the ledger to hold: unreadable, not a page that can never commit.
        balanceTransaction({ id: `txn_${'x'.repeat(200)}`, type: 'stripe_fee', amount: -10, created: seconds(daysAgo(8)) }, null),
        // A NUL in its description: stored, the NUL dropped from the evidence jsonb cannot hold.
        balanceTransaction({ id: 'txn_nul', type: 'stripe_fee', amount: -20, description: 'fee\u0000for\u0000you', created: seconds(daysAgo(8)) }, null),
      ],
      payouts: [],
    };
    fixture.gateway.rules.length = 0;
    fixture.gateway.requests.length = 0;
    serveStripeLedger(fixture.gateway, account, { apiKey: API_KEY, pageSize: 100 });
    await insertPayments(database.sql, 'stripe', [
      { key: 'pi_nocredit', status: 'paid', amount: 1500, created: daysAgo(6) },
      { key: 'pi_amt', status: 'paid', amount: 5000, created: daysAgo(8) },
      { key: 'pi_ref', status: 'paid', amount: 3000, created: daysAgo(8) },
      { key: 'pi_ref2', status: 'partially_refunded', amount: 3000, refunded: 1000, created: daysAgo(8), updated: daysAgo(7) },
      { key: 'pi_cb', status: 'paid', amount: 2500, created: daysAgo(8) },
      { key: 'pi_cb2', status: 'charged_back', amount: 2500, created: daysAgo(8), updated: daysAgo(6) },
    ]);
    const first = await fixture.reconcile('--provider', 'stripe', '--since', '9d', '--json');
    assert.equal(first.code, 1, first.stderr);
    const runs = first.json<{ runs: JsonRun[] }>().runs;
    const tooLong = runs[0]!.findings.filter((f) => f.subject.startsWith('unreadable:'));
    assert.equal(tooLong.length, 1);
    assert.match(String(tooLong[0]!.evidence.reason), /its id is longer than 150 characters/);
    const [nul] = await database.sql`select raw->>'description' as description from ledger_entries where entry_id = 'txn_nul'`;
    assert.equal(nul!.description, 'feeforyou');
    assert.deepEqual(
      kindsAndSubjects(runs).filter((k) => !k.includes('unreadable:')),
      [
        'amount_mismatch pi_amt',
        'chargeback_not_in_ledger pi_cb2',
        'chargeback_not_on_payment pi_cb',
        'credit_without_payment txn_ghost',
        'missing_credit pi_nocredit',
        'refund_not_in_ledger pi_ref2',
        'refund_not_on_payment pi_ref',
        'unreadable_entry txn_bad',
      ],
    );
    const ghost = runs[0]!.findings.find((f) => f.kind === 'credit_without_payment')!;
    assert.match(String(ghost.evidence.backfillCommand), /^inboxctl backfill stripe --since \d{4}-\d{2}-\d{2}T/);
    const text = await fixture.reconcile('--provider', 'stripe', '--since', '9d');
    assert.equal(text.code, 1);
    assert.match(
      text.out,
      /credit_without_payment: ledger entry txn_ghost .* credits pi_ghost, which the inbox has no payment for: a webhook that never came\. Fetch it with `inboxctl backfill stripe --since /,
    );
    assert.match(text.out, /unreadable_entry: entry txn_bad could not be read \("amount" is not an integer amount in minor units\)/);
    // The second run found the same nine: still nine rows, none new.
    const [counts] = await database.sql`select count(*) filter (where status = 'open')::int as open, count(*)::int as total from reconciliation_findings`;
    assert.deepEqual([counts!.open, counts!.total], [9, 9]);
    // The missed webhook arrives (backfill); the next run resolves its finding.
    await insertPayments(database.sql, 'stripe', [{ key: 'pi_ghost', status: 'paid', amount: 1234, created: new Date() }]);
    const third = await fixture.reconcile('--provider', 'stripe', '--since', '9d', '--json');
    assert.equal(third.json<{ runs: JsonRun[] }>().runs[0]!.resolved, 1);
    const [resolved] = await database.sql`select status from reconciliation_findings where kind = 'credit_without_payment'`;
    assert.equal(resolved!.status, 'resolved');
  });

  test('--payout: a payout whose entries do not add up to its amount is a finding; one that adds up is not', async () => {
    fixture.gateway.rules.length = 0;
    const account: StripeAccount = {
      transactions: [
        { ...balanceTransaction({ id: 'txn_po_a', amount: 1000, fee: 59, created: seconds(daysAgo(4)) }, charge('ch_po_a', 'pi_po_a')), payout: 'po_short' },
        { ...balanceTransaction({ id: 'txn_po_b', amount: 200, fee: 36, created: seconds(daysAgo(4)) }, charge('ch_po_b', 'pi_po_b')), payout: 'po_short' },
        // The payout's own balance transaction, listed with its contents and left out of the sum.
        {
          ...balanceTransaction({ id: 'txn_po_short', type: 'payout', reporting_category: 'payout', amount: -1100, created: seconds(daysAgo(2)) }, null),
          payout: 'po_short',
        },
        { ...balanceTransaction({ id: 'txn_po_c', amount: 1100, fee: 0, created: seconds(daysAgo(4)) }, charge('ch_po_c', 'pi_po_c')), payout: 'po_even' },
      ],
      payouts: [
        payout({ id: 'po_short', amount: 1100, balance_transaction: 'txn_po_short' }),
        payout({ id: 'po_even', amount: 1100, balance_transaction: 'txn_po_even' }),
      ],
    };
    serveStripeLedger(fixture.gateway, account, { apiKey: API_KEY, pageSize: 100 });
    await insertPayments(database.sql, 'stripe', [
      { key: 'pi_po_a', status: 'paid', amount: 1000, created: daysAgo(4) },
      { key: 'pi_po_b', status: 'paid', amount: 200, created: daysAgo(4) },
      { key: 'pi_po_c', status: 'paid', amount: 1100, created: daysAgo(4) },
    ]);
    const short = await fixture.reconcile('--provider', 'stripe', '--payout', 'po_short', '--json');
    assert.equal(short.code, 1, short.stderr);
    const [finding] = short.json<{ runs: JsonRun[] }>().runs[0]!.findings;
    assert.deepEqual(finding!.evidence, {
      kind: 'payout_mismatch',
      payoutId: 'po_short',
      payoutAmount: 1100,
      currency: 'usd',
      entriesNet: 1105,
      entryCount: 2,
    });
    const even = await fixture.reconcile('--provider', 'stripe', '--payout', 'po_even', '--json');
    assert.equal(even.code, 0, even.out);
    const [paidOut] = await database.sql`select payout_id from ledger_entries where entry_id = 'txn_po_a'`;
    assert.equal(paidOut!.payout_id, 'po_short');
  });

  test('down half-way: the run is kept as partial (exit 4), the next one resumes at the page it stopped at and counts nothing twice; a 429 is waited out', async () => {
    fixture.gateway.rules.length = 0;
    fixture.gateway.requests.length = 0;
    const transactions = Array.from({ length: 7 }, (_, i) =>
      balanceTransaction({ id: `txn_page_${i}`, amount: 100 + i, created: seconds(daysAgo(3)) - i * 60 }, charge(`ch_page_${i}`, `pi_page_${i}`)),
    );
    await insertPayments(
      database.sql,
      'stripe',
      transactions.map((_t, i) => ({ key: `pi_page_${i}`, status: 'paid', amount: 100 + i, created: daysAgo(3) })),
    );
    let down = true;
    let rateLimited = false;
    serveStripeLedger(
      fixture.gateway,
      { transactions, payouts: [] },
      {
        apiKey: API_KEY,
        pageSize: 2,
        interrupt(request) {
          const after = new URL(request.path, 'http://x').searchParams.get('starting_after');
          if (after === 'txn_page_3' && down) return { status: 503, json: { error: { message: 'Service unavailable' } } };
          if (after === 'txn_page_5' && !rateLimited) {
            rateLimited = true;
            return { status: 429, headers: { 'retry-after': '1' }, json: { error: { type: 'rate_limit_error' } } };
          }
          return undefined;
        },
      },
    );
    const stopped = await fixture.reconcile('--provider', 'stripe', '--since', '5d', '--json');
    assert.equal(stopped.code, 4, stopped.stderr);
    assert.match(stopped.stderr, /The reconciliation stopped part-way \(stripe run \d+: 2 pages read, 4 entries\): .*503.*run it again to continue/);
    assert.equal(stopped.json<{ error: { code: string } }>().error.code, 'operation_incomplete');
    const [partial] =
      await database.sql`select id::int, status, cursor, pages, entries_new from reconciliation_runs where scope = 'window' order by id desc limit 1`;
    assert.deepEqual({ ...partial, id: undefined }, { id: undefined, status: 'partial', cursor: 'txn_page_3', pages: 2, entries_new: 4 });
    down = false;
    fixture.gateway.requests.length = 0;
    const resumed = await fixture.reconcile('--provider', 'stripe', '--since', '5d', '--json');
    assert.equal(resumed.code, 0, resumed.stderr);
    const runs = resumed.json<{ runs: JsonRun[] }>().runs;
    assert.equal(runs[0]!.resumed, true);
    assert.equal(runs[0]!.run.id, partial!.id);
    assert.equal(new URL(fixture.gateway.requests[0]!.path, 'http://x').searchParams.get('starting_after'), 'txn_page_3');
    assert.equal(runs[0]!.rateLimitedWaits, 1);
    assert.deepEqual([runs[0]!.run.status, runs[0]!.run.pages, runs[0]!.run.entriesRead, runs[0]!.run.entriesNew], ['complete', 4, 7, 7]);
    const [stored] = await database.sql`select count(*)::int as entries from ledger_entries where entry_id like 'txn_page_%'`;
    assert.equal(stored!.entries, 7);
  });

  test('a run left running by a process that died (started more than six hours ago) is resumed like a partial one; a younger one is left alone', async () => {
    const since = daysAgo(2);
    const [abandoned] = await database.sql`insert into reconciliation_runs (provider, scope, since, until, status, started_at)
      values ('stripe', 'window', ${since}, ${daysAgo(1)}, 'running', ${new Date(Date.now() - 7 * 3_600_000)}) returning id::int`;
    const result = await fixture.reconcile('--provider', 'stripe', '--since', '2d', '--json');
    const runs = result.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual([runs[0]!.run.id, runs[0]!.resumed, runs[0]!.run.status], [abandoned!.id, true, 'complete']);
    const [young] = await database.sql`insert into reconciliation_runs (provider, scope, since, until, status, started_at)
      values ('stripe', 'window', ${since}, ${daysAgo(1)}, 'running', ${new Date(Date.now() - 60_000)}) returning id::int`;
    const again = (await fixture.reconcile('--provider', 'stripe', '--since', '2d', '--json')).json<{ runs: JsonRun[] }>().runs;
    assert.ok(again.every((r) => r.run.id !== young!.id && !r.resumed));
  });

  test('usage: --since with --payout, --payout without --provider, an unknown provider or one with no ledger: exit 2, nothing read', async () => {
    fixture.gateway.requests.length = 0;
    const cases: Array<[string[], RegExp]> = [
      [['--provider', 'stripe', '--since', '7d', '--payout', 'po_1'], /--since and --payout exclude each other/],
      [['--payout', 'po_1'], /--payout needs --provider/],
      [['--provider', 'nosuch'], /no provider "nosuch" is configured here \(stripe\)/],
      [['--provider', 'stripe', '--since', 'tomorrow'], /--since/],
    ];
    for (const [args, message] of cases) {
      const result = await fixture.reconcile(...args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
    assert.equal(fixture.gateway.requests.length, 0);
  });
});
