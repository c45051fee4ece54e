import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { stripeApi } from '../../src/gateways/stripe/api.ts';
import { stripeLedger } from '../../src/gateways/stripe/ledger.ts';
import { createLogger } from '../../src/logger.ts';
import { RECONCILE_PAYOUTS_QUEUE, RECONCILE_QUEUE, startReconcileCron } from '../../src/operations/reconcile-cron.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import { startFakeGateway } from '../support/fake-gateway.ts';
import { testConfig } from '../support/config.ts';
import { waitFor } from '../support/wait.ts';
import { insertInboxRows, startSchedulingBoss, useOperationsHarness } from '../operations/harness.ts';
import { balanceTransaction, payout, serveStripeLedger } from './fake-stripe-ledger.ts';
import { refreshedGauges } from '../support/gauges.ts';
import { daysAgo, insertPayments } from './harness.ts';

const h = useOperationsHarness();
const API_KEY = 'sk_test_reconcile_cron';
const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** One Stripe account for both tests: a payout announced in the first, another in the second. */
const account = {
  transactions: [
    {
      ...balanceTransaction(
        { id: 'txn_cron_paid', amount: 1000, fee: 59, created: seconds(daysAgo(3)) },
        { object: 'charge' as const, id: 'ch_cron_paid', paymentIntent: 'pi_cron_paid' },
      ),
      payout: 'po_cron',
    },
    // A credit for a payment the inbox never heard of.
    {
      ...balanceTransaction(
        { id: 'txn_cron_ghost', amount: 500, fee: 44, created: seconds(daysAgo(3)) },
        { object: 'charge' as const, id: 'ch_cron_ghost', paymentIntent: 'pi_cron_ghost' },
      ),
      payout: 'po_cron',
    },
    {
      ...balanceTransaction(
        { id: 'txn_late', amount: 1000, fee: 59, created: seconds(daysAgo(2)) },
        { object: 'charge' as const, id: 'ch_late', paymentIntent: 'pi_late' },
      ),
      payout: 'po_late',
    },
  ],
  payouts: [
    payout({ id: 'po_cron', amount: 1397, balance_transaction: 'txn_po_cron' }),
    payout({ id: 'po_late', amount: 941, balance_transaction: 'txn_po_late' }),
  ],
};

/** pg-boss scheduling, with the reconciliation cron on it; stopped by the test when it is done. */
async function startCron(gatewayUrl: string, operations: { reconcileCron: string; reconcilePayoutsCron: string }): Promise<PgBoss> {
  const config = testConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_reconcile_cron' });
  const target = {
    provider: 'stripe',
    gateway: stripeApi,
    baseUrl: gatewayUrl,
    key: API_KEY,
    settings: {},
    ratePerSecond: 50,
    timeoutMs: 2000,
    breaker: { consecutiveFailures: 5, halfOpenAfterMs: 1000 },
  };
  const refetcher = createRefetcher({ targets: [target], clock: () => new Date() });
  const boss = await startSchedulingBoss(h);
  await startReconcileCron({
    db: h.handle.db,
    boss,
    clock: () => new Date(),
    logger: createLogger('silent'),
    targets: [{ provider: 'stripe', ledger: stripeLedger, settlementDays: 2 }],
    get: (provider, path) => refetcher.get(provider, path),
    operations: { ...config.operations, ...operations, reconcileWindowDays: 7 },
  });
  return boss;
}

const completed = (queue: string) => async () => {
  const [row] = await h.database.sql`select count(*)::int as n from pgboss.job where name = ${queue} and state = 'completed'`;
  return row!.n > 0;
};

describe('the reconciliation job on pg-boss cron', () => {
  test('reconciles the window and each payout announced by webhook, once; the gauges count the open findings', async () => {
    const gateway = await startFakeGateway();
    h.database.onTeardown(() => gateway.close());
    serveStripeLedger(gateway, account, { apiKey: API_KEY, pageSize: 100 });
    await insertPayments(h.database.sql, 'stripe', [
      { key: 'pi_cron_paid', status: 'paid', amount: 1000, created: daysAgo(3) },
      { key: 'pi_late', status: 'paid', amount: 1000, created: daysAgo(2) },
    ]);
    // Stripe's payout.paid, as the receiver stored it: the payout's id is the event's resource.
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_po_paid', eventType: 'payout.paid', resourceId: 'po_cron', status: 'ignored', receivedAt: daysAgo(1) },
    ]);
    // Every minute, so the schedule is due as soon as it is registered; the payouts-only one never.
    const boss = await startCron(gateway.baseUrl, { reconcileCron: '* * * * *', reconcilePayoutsCron: '0 0 1 1 *' });
    await waitFor(completed(RECONCILE_QUEUE), { message: 'a completed reconciliation run', timeoutMs: 60_000 });
    await boss.stop({ graceful: true, close: true });

    const runs = await h.database.sql`select scope, payout_id, status from reconciliation_runs order by id`;
    assert.deepEqual(
      runs.map((r) => `${r.scope} ${r.payout_id} ${r.status}`),
      ['window null complete', 'payout po_cron complete'],
    );
    const findings = await h.database.sql`select kind, subject from reconciliation_findings where status = 'open' order by kind`;
    // 941 + 456 = 1397: the payout adds up; the ghost credit is the one finding.
    assert.deepEqual(
      findings.map((f) => `${f.kind} ${f.subject}`),
      ['credit_without_payment txn_cron_ghost'],
    );
    const [read] = await h.database.sql`select entries_read_at is not null as read from ledger_payouts where payout_id = 'po_cron'`;
    assert.equal(read!.read, true);

    const metrics = await refreshedGauges(h.handle.db, ['stripe', 'asaas']);
    const text = await metrics.registry.getSingleMetricAsString('inbox_reconciliation_findings_open');
    assert.match(text, /inbox_reconciliation_findings_open\{provider="stripe",kind="credit_without_payment"\} 1/);
    assert.match(text, /inbox_reconciliation_findings_open\{provider="stripe",kind="any"\} 1/);
    assert.match(text, /inbox_reconciliation_findings_open\{provider="asaas",kind="any"\} 0/);
    assert.match(await metrics.registry.getSingleMetricAsString('inbox_reconciliation_last_complete_run_timestamp_seconds'), /\{provider="stripe"\} \d{10}/);
  });

  test('between two daily runs, a payout announced by a webhook after its entries were read is read again (RECONCILE_PAYOUTS_CRON); no window is read', async () => {
    const gateway = await startFakeGateway();
    h.database.onTeardown(() => gateway.close());
    serveStripeLedger(gateway, account, { apiKey: API_KEY, pageSize: 100 });
    // po_cron was read by the first test; Stripe says now that its reconciliation is complete.
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_po_cron_done', eventType: 'payout.reconciliation_completed', resourceId: 'po_cron', status: 'ignored', receivedAt: new Date() },
      { eventId: 'evt_po_late_paid', eventType: 'payout.paid', resourceId: 'po_late', status: 'ignored', receivedAt: new Date() },
    ]);
    const before = await h.database.sql`select count(*)::int as n from reconciliation_runs`;
    const boss = await startCron(gateway.baseUrl, { reconcileCron: '0 0 1 1 *', reconcilePayoutsCron: '* * * * *' });
    await waitFor(completed(RECONCILE_PAYOUTS_QUEUE), { message: 'a completed payouts run', timeoutMs: 60_000 });
    await boss.stop({ graceful: true, close: true });
    const runs = await h.database.sql`select scope, payout_id, status from reconciliation_runs order by id offset ${before[0]!.n}`;
    assert.deepEqual(runs.map((r) => `${r.scope} ${r.payout_id} ${r.status}`).sort(), ['payout po_cron complete', 'payout po_late complete']);
  });
});
