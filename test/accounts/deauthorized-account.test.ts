/**
 * A connected account that deauthorized the platform (`account.application.deauthorized`): its
 * events are still stored and folded, from their payloads, and no gateway read is made on its
 * behalf (the fake Stripe API counts requests per Stripe-Account); `inboxctl stats` and the
 * dashboard say so. An `account.application.authorized` after it resumes the reads.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe, stripeCharge } from '../support/stripe.ts';
import { applicationEvent, connectEvent, serveConnectedCharges } from './support.ts';

const GONE = 'acct_1Deauthorized';
const LIVE = 'acct_1StillConnected';

const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;
const owners = new Map<string, { account: string; charge: Record<string, unknown> }>();
let requestsPerAccount: Map<string, number>;

setup(async () => {
  gateway = await startFakeGateway();
  requestsPerAccount = serveConnectedCharges(gateway, owners);
  const file = JSON.stringify({
    providers: { stripe: { driver: 'stripe', connect: true, api: { baseUrl: gateway.baseUrl }, ordering: { default: 'refetch' } } },
  });
  const env = { INBOX_CONFIG: '/inbox.json', WEBHOOK_SECRET_STRIPE: SECRET, GATEWAY_API_KEY_STRIPE: 'sk_test_platform', INBOX_DASHBOARD: 'on' };
  service = await startTestService({ database, env, files: { '/inbox.json': file } });
});

after(async () => {
  await gateway?.close();
});

/** inboxctl's environment: the database, and the provider by its secret (stats needs no file). */
const cliEnv = () => ({ DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET });

async function post(body: string) {
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
}

describe('a deauthorized connected account', () => {
  test('keeps its events stored and folded from their payloads, with no gateway read on its behalf, and is shown in stats and on the dashboard', async () => {
    const created = Math.floor(Date.now() / 1000) - 600;
    await post(applicationEvent(GONE, 'account.application.deauthorized', 'evt_deauthorized', created));
    const [deauthorization] = await waitUntilSettled(database.sql, ['evt_deauthorized']);
    assert.equal(deauthorization!.status, 'processed');

    owners.set('ch_gone', { account: GONE, charge: stripeCharge('ch_gone', { amount_refunded: 2000, refunded: true }) });
    owners.set('ch_live', { account: LIVE, charge: stripeCharge('ch_live', { amount_refunded: 700 }) });
    await post(connectEvent(GONE, { id: 'evt_gone_paid', type: 'charge.succeeded', chargeId: 'ch_gone', created: created + 10 }));
    await post(connectEvent(GONE, { id: 'evt_gone_refund', type: 'charge.refunded', chargeId: 'ch_gone', created: created + 20, amountRefunded: 2000 }));
    await post(connectEvent(LIVE, { id: 'evt_live_refund', type: 'charge.refunded', chargeId: 'ch_live', created: created + 20, amountRefunded: 700 }));
    await waitUntilSettled(database.sql, ['evt_gone_paid', 'evt_gone_refund', 'evt_live_refund']);

    const payments = await database.sql`select gateway_charge_id, account, status, amount_refunded from payments order by gateway_charge_id`;
    assert.deepEqual(
      payments.map((p) => [p.gateway_charge_id, p.account, p.status, Number(p.amount_refunded)]),
      [
        ['ch_gone', GONE, 'refunded', 2000],
        ['ch_live', LIVE, 'partially_refunded', 700],
      ],
    );
    const facts = await database.sql`select event_id, fact->>'snapshot' as snapshot from webhook_inbox where event_id like 'evt_gone_%' order by event_id`;
    assert.deepEqual(
      facts.map((f) => f.snapshot),
      [null, null],
      'folded from the payloads, no snapshot',
    );
    assert.equal(requestsPerAccount.get(GONE) ?? 0, 0, 'no gateway read on behalf of the deauthorized account');
    assert.ok((requestsPerAccount.get(LIVE) ?? 0) > 0, 'the other account is read');

    const text = await runInboxctl(['stats'], cliEnv());
    assert.match(text.out, new RegExp(`Deauthorized accounts .*: 1\\n {2}stripe ${GONE}: since `));
    const one = (await runInboxctl(['stats', '--account', GONE, '--json'], cliEnv())).json();
    assert.equal(one.totals.processed + one.totals.ignored, 3, 'its deauthorization and its two charge events');
    assert.deepEqual(
      one.deauthorizedAccounts.map((d: { provider: string; account: string }) => [d.provider, d.account]),
      [['stripe', GONE]],
    );

    const overview = await (await fetch(`${service.baseUrl}/dashboard`)).text();
    assert.ok(overview.includes(`stripe ${GONE}: deauthorized`), 'the overview says so');
  });

  test('an account.application.authorized after it resumes the reads', async () => {
    await post(applicationEvent(GONE, 'account.application.authorized', 'evt_reauthorized', Math.floor(Date.now() / 1000) - 60));
    await waitUntilSettled(database.sql, ['evt_reauthorized']);
    owners.set('ch_gone_2', { account: GONE, charge: stripeCharge('ch_gone_2') });
    await post(connectEvent(GONE, { id: 'evt_gone_2', type: 'charge.succeeded', chargeId: 'ch_gone_2', created: Math.floor(Date.now() / 1000) }));
    await waitUntilSettled(database.sql, ['evt_gone_2']);
    assert.ok((requestsPerAccount.get(GONE) ?? 0) > 0, 'read again on its behalf');
    const [row] = await database.sql`select state from gateway_account_access where provider = 'stripe' and account = ${GONE}`;
    assert.equal(row!.state, 'authorized');
  });
});
