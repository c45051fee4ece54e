import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gatewayLedgers } from '../../src/gateways/registry.ts';
import { createLogger } from '../../src/logger.ts';
import { RECONCILE_QUEUE, reconcileTargetsOf, startReconcileCron } from '../../src/operations/reconcile-cron.ts';
import { isAccountDeauthorized } from '../../src/refetch/account-access-sql.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import { testConfig } from '../support/config.ts';
import { startFakeGateway } from '../support/fake-gateway.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { waitFor } from '../support/wait.ts';
import { startSchedulingBoss, useOperationsHarness } from '../operations/harness.ts';
import { type StripeAccount, balanceTransaction, serveStripeLedger } from '../reconciliation/fake-stripe-ledger.ts';
import { daysAgo, insertPayments } from '../reconciliation/harness.ts';

const h = useOperationsHarness();
const API_KEY = 'sk_test_reconcile_cron_connect';
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
const credited = (id: string, paymentIntent: string, amount: number): StripeAccount =>
  ({
    transactions: [balanceTransaction({ id, amount, fee: 59, created: seconds(daysAgo(4)) }, { object: 'charge', id: `ch_${paymentIntent}`, paymentIntent })],
    payouts: [],
  }) satisfies StripeAccount;

describe('the reconciliation cron of a Connect platform', () => {
  test('reconciles the platform, then each known account and each account its payments name, on its behalf; a deauthorized account is skipped, unread, and logged', async () => {
    const gateway = await startFakeGateway();
    h.database.onTeardown(() => gateway.close());
    serveStripeLedger(gateway, credited('txn_plat', 'pi_plat', 1000), { apiKey: API_KEY, pageSize: 100 });
    serveStripeLedger(gateway, credited('txn_known', 'pi_known', 2000), { apiKey: API_KEY, pageSize: 100, onBehalfOf: 'acct_1Known' });
    serveStripeLedger(gateway, credited('txn_seen', 'pi_seen', 3000), { apiKey: API_KEY, pageSize: 100, onBehalfOf: 'acct_1Seen' });
    serveStripeLedger(gateway, credited('txn_gone', 'pi_gone', 4000), { apiKey: API_KEY, pageSize: 100, onBehalfOf: 'acct_1Gone' });
    await insertPayments(h.database.sql, 'stripe', [
      { key: 'pi_plat', status: 'paid', amount: 1000, created: daysAgo(4) },
      { key: 'pi_known', status: 'paid', amount: 2000, created: daysAgo(4), account: 'acct_1Known' },
      { key: 'pi_known_missing', status: 'paid', amount: 2500, created: daysAgo(4), account: 'acct_1Known' },
      // Not in knownAccounts: its payments name it, so its money is checked too.
      { key: 'pi_seen', status: 'paid', amount: 3000, created: daysAgo(4), account: 'acct_1Seen' },
      { key: 'pi_gone', status: 'paid', amount: 4000, created: daysAgo(4), account: 'acct_1Gone' },
    ]);
    await h.database.sql`insert into gateway_account_access (provider, account, state, event_id, occurred_at, recorded_at)
      values ('stripe', 'acct_1Gone', 'deauthorized', 'evt_deauth_cron', now(), now())`;

    const config = testConfig(
      { WEBHOOK_SECRET_STRIPE: 'whsec_reconcile_cron_connect', GATEWAY_API_KEY_STRIPE: API_KEY, INBOX_CONFIG: '/inbox.json' },
      {
        '/inbox.json': JSON.stringify({
          providers: { stripe: { driver: 'stripe', connect: true, knownAccounts: ['acct_1Known', 'acct_1Gone'], api: { baseUrl: gateway.baseUrl } } },
        }),
      },
    );
    const targets = reconcileTargetsOf(config.providers.values(), gatewayLedgers);
    assert.deepEqual(
      targets.map((t) => [t.provider, t.accounts, t.accountsOfPayments]),
      [['stripe', ['acct_1Known', 'acct_1Gone'], true]],
    );
    const isDeauthorized = (provider: string, account: string) => isAccountDeauthorized(h.handle.db, provider, account);
    const refetcher = createRefetcher({
      targets: [...config.providers.values()].flatMap((p) => (p.refetch.api ? [p.refetch.api] : [])),
      clock: () => new Date(),
      accountAccess: { isDeauthorized },
    });
    const logs = logLineCapture();
    const boss = await startSchedulingBoss(h);
    await startReconcileCron({
      db: h.handle.db,
      boss,
      clock: () => new Date(),
      logger: createLogger('info', logs.destination),
      targets,
      get: (provider, path, account) => refetcher.get(provider, path, undefined, account),
      isDeauthorized,
      operations: { ...config.operations, reconcileCron: '* * * * *', reconcilePayoutsCron: '0 0 1 1 *', reconcileWindowDays: 7 },
    });
    const completed = async () => {
      const [row] = await h.database.sql`select count(*)::int as n from pgboss.job where name = ${RECONCILE_QUEUE} and state = 'completed'`;
      return row!.n > 0;
    };
    await waitFor(completed, { message: 'a completed reconciliation job', timeoutMs: 60_000 });
    await boss.stop({ graceful: true, close: true });

    const runs = await h.database.sql`select account, status from reconciliation_runs order by id`;
    assert.deepEqual(
      runs.map((r) => `${r.account} ${r.status}`),
      ['null complete', 'acct_1Known complete', 'acct_1Seen complete'],
    );
    const findings = await h.database.sql`select kind, subject, account from reconciliation_findings where status = 'open' order by subject`;
    assert.deepEqual(
      findings.map((f) => `${f.kind} ${f.subject} ${f.account}`),
      ['missing_credit pi_known_missing acct_1Known'],
    );
    const perAccount = new Map<string, number>();
    for (const request of gateway.requests) {
      const named = String(request.headers['stripe-account'] ?? '(none)');
      perAccount.set(named, (perAccount.get(named) ?? 0) + 1);
    }
    assert.equal(perAccount.get('acct_1Gone'), undefined, 'no request on behalf of the deauthorized account');
    assert.deepEqual([...perAccount.keys()].sort(), ['(none)', 'acct_1Known', 'acct_1Seen']);
    const skipped = logs.lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.account === 'acct_1Gone');
    assert.equal(skipped.length, 1);
    assert.match(String(skipped[0]!.msg), /skipped: the account deauthorized this platform/);
  });
});
