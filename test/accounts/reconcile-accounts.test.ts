import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { type StripeAccount, balanceTransaction, serveStripeLedger } from '../reconciliation/fake-stripe-ledger.ts';
import { type JsonRun, daysAgo, insertPayments, kindsAndSubjects, useReconcileFixture } from '../reconciliation/harness.ts';

const database = useTestDatabase();
const API_KEY = 'sk_test_reconcile_connect';
const fixture = useReconcileFixture(database, {
  provider: 'stripe',
  env: { WEBHOOK_SECRET_STRIPE: 'whsec_reconcile_connect', GATEWAY_API_KEY_STRIPE: API_KEY },
  providerConfig: { connect: true, knownAccounts: ['acct_1Shop', 'acct_1Gone'] },
});
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const charge = (id: string, paymentIntent: string) => ({ object: 'charge' as const, id, paymentIntent });

/** The platform's own balance: its one payment credited. */
const platform: StripeAccount = {
  transactions: [balanceTransaction({ id: 'txn_plat_1', amount: 2000, fee: 88, created: seconds(daysAgo(10)) }, charge('ch_plat_1', 'pi_plat_1'))],
  payouts: [],
};
/** acct_1Shop's balance: one of its two paid payments credited, the other never. */
const shop: StripeAccount = {
  transactions: [balanceTransaction({ id: 'txn_shop_1', amount: 3000, fee: 117, created: seconds(daysAgo(10)) }, charge('ch_shop_1', 'pi_shop_1'))],
  payouts: [],
};

const stripeAccountHeaders = () => fixture.gateway.requests.map((r) => r.headers['stripe-account'] ?? '(none)');

describe('inboxctl reconcile of a Connect platform: each account its own ledger and payments', () => {
  test("a platform run reads the platform's ledger only, and a connected account's paid payments are not its missing credits", async () => {
    serveStripeLedger(fixture.gateway, platform, { apiKey: API_KEY, pageSize: 100 });
    serveStripeLedger(fixture.gateway, shop, { apiKey: API_KEY, pageSize: 100, onBehalfOf: 'acct_1Shop' });
    await insertPayments(database.sql, 'stripe', [
      { key: 'pi_plat_1', status: 'paid', amount: 2000, created: daysAgo(10) },
      { key: 'pi_shop_1', status: 'paid', amount: 3000, created: daysAgo(10), account: 'acct_1Shop' },
      { key: 'pi_shop_missing', status: 'paid', amount: 4000, created: daysAgo(10), account: 'acct_1Shop' },
    ]);
    const result = await fixture.reconcile('--provider', 'stripe', '--since', '30d', '--json');
    assert.equal(result.code, 0, result.stderr);
    const runs = result.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual(kindsAndSubjects(runs), []);
    assert.ok(fixture.gateway.requests.length > 0);
    assert.deepEqual([...new Set(stripeAccountHeaders())], ['(none)']);
    const rows = await database.sql`select account from reconciliation_runs`;
    assert.deepEqual(
      rows.map((r) => r.account),
      [null],
    );
    const entries = await database.sql`select entry_id, account from ledger_entries order by entry_id`;
    assert.deepEqual(
      entries.map((e) => `${e.entry_id} ${e.account}`),
      ['txn_plat_1 null'],
    );
  });

  test("--account reads that account's ledger with Stripe-Account, and finds its own missing credit; runs, entries and findings say whose", async () => {
    serveStripeLedger(fixture.gateway, platform, { apiKey: API_KEY, pageSize: 100 });
    serveStripeLedger(fixture.gateway, shop, { apiKey: API_KEY, pageSize: 100, onBehalfOf: 'acct_1Shop' });
    const requestsBefore = fixture.gateway.requests.length;
    const result = await fixture.reconcile('--provider', 'stripe', '--account', 'acct_1Shop', '--since', '30d', '--json');
    assert.equal(result.code, 1, result.stderr);
    const runs = result.json<{ runs: JsonRun[] }>().runs;
    assert.deepEqual(kindsAndSubjects(runs), ['missing_credit pi_shop_missing']);
    assert.deepEqual([...new Set(stripeAccountHeaders().slice(requestsBefore))], ['acct_1Shop']);
    const rows = await database.sql`select account from reconciliation_runs order by id`;
    assert.deepEqual(
      rows.map((r) => r.account),
      [null, 'acct_1Shop'],
    );
    const findings = await database.sql`select kind, subject, account from reconciliation_findings where status = 'open'`;
    assert.deepEqual(
      findings.map((f) => `${f.kind} ${f.subject} ${f.account}`),
      ['missing_credit pi_shop_missing acct_1Shop'],
    );
    const entries = await database.sql`select entry_id, account from ledger_entries order by entry_id`;
    assert.deepEqual(
      entries.map((e) => `${e.entry_id} ${e.account}`),
      ['txn_plat_1 null', 'txn_shop_1 acct_1Shop'],
    );

    // The platform's run again: the connected account's entries and finding are none of its business.
    const again = await fixture.reconcile('--provider', 'stripe', '--since', '30d', '--json');
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(kindsAndSubjects(again.json<{ runs: JsonRun[] }>().runs), []);
    const [open] = await database.sql`select count(*)::int as n from reconciliation_findings where status = 'open'`;
    assert.equal(open!.n, 1);
  });

  test('an account that deauthorized the platform is not read: no request, no run, and the command says why', async () => {
    serveStripeLedger(fixture.gateway, shop, { apiKey: API_KEY, pageSize: 100, onBehalfOf: 'acct_1Gone' });
    await database.sql`insert into gateway_account_access (provider, account, state, event_id, occurred_at, recorded_at)
      values ('stripe', 'acct_1Gone', 'deauthorized', 'evt_deauth', now(), now())`;
    const requestsBefore = fixture.gateway.requests.length;
    const runsBefore = await database.sql`select count(*)::int as n from reconciliation_runs`;
    const result = await fixture.reconcile('--provider', 'stripe', '--account', 'acct_1Gone', '--since', '30d');
    // Not 4: running it again would not read it either.
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /acct_1Gone deauthorized this platform/);
    assert.equal(fixture.gateway.requests.length - requestsBefore, 0);
    const runsAfter = await database.sql`select count(*)::int as n from reconciliation_runs`;
    assert.equal(runsAfter[0]!.n, runsBefore[0]!.n);
  });

  test('--account needs --provider, and names an account the provider can read on behalf of', async () => {
    const alone = await fixture.reconcile('--account', 'acct_1Shop');
    assert.equal(alone.code, 2);
    assert.match(alone.stderr, /--account needs --provider/);
    const empty = await fixture.reconcile('--provider', 'stripe', '--account', '');
    assert.equal(empty.code, 2);
  });
});
