/**
 * The operators' filters by account, over a real service, inboxctl (in process) and a fake Stripe
 * API: `inboxctl replay|lanes|backfill --account` and the dashboard's event list.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { type Consumer, startConsumer } from '../delivery/support/consumer.ts';
import { newDestinationSecret } from '../delivery/support/lanes.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { connectEvent } from './support.ts';

const A = 'acct_1FilterA';
const B = 'acct_1FilterB';

const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;
let consumer: Consumer;
let env: Record<string, string>;
const configPath = path.join(mkdtempSync(path.join(tmpdir(), 'inbox-account-filters-')), 'inbox.json');

setup(async () => {
  gateway = await startFakeGateway();
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  // The destination refuses everything: every lane stays behind, for `lanes` to list.
  consumer.behaviour = () => ({ kind: 'status', status: 503 });
  database.onTeardown(() => consumer.close());
  database.onTeardown(() => rmSync(path.dirname(configPath), { recursive: true, force: true }));
  const file = JSON.stringify({
    providers: { stripe: { driver: 'stripe', connect: true, api: { baseUrl: gateway.baseUrl }, ordering: { default: 'occurred_at' } } },
    destinations: { app: {} },
  });
  writeFileSync(configPath, file);
  env = {
    INBOX_CONFIG: configPath,
    WEBHOOK_SECRET_STRIPE: SECRET,
    GATEWAY_API_KEY_STRIPE: 'sk_test_platform',
    DESTINATION_URL_APP: consumer.url,
    DESTINATION_SECRET_APP: secret,
    INBOX_DASHBOARD: 'on',
  };
  service = await startTestService({ database, env, files: { [configPath]: file } });
  const created = Math.floor(Date.now() / 1000) - 3600;
  for (const [account, n] of [
    [A, 1],
    [A, 2],
    [B, 1],
    [B, 2],
  ] as const) {
    const body = connectEvent(account, { id: `evt_${account}_${n}`, type: 'charge.succeeded', chargeId: `ch_${account}_${n}`, created });
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
  }
  await waitUntilSettled(database.sql, [`evt_${A}_1`, `evt_${A}_2`, `evt_${B}_1`, `evt_${B}_2`]);
});

after(async () => {
  await gateway?.close();
});

const cli = (args: string[]) => runInboxctl(args, { ...env, DATABASE_URL: database.url });

describe('filters by account', () => {
  test("inboxctl lanes --account lists the lanes of that account's payments only", async () => {
    await waitFor(async () => (await cli(['lanes', '--json'])).json().lanes.length === 4, { message: 'four lanes behind' });
    const run = await cli(['lanes', '--account', A, '--json']);
    assert.deepEqual(
      run
        .json()
        .lanes.map((l: { chargeId: string; account: string }) => [l.chargeId, l.account])
        .sort(),
      [
        [`ch_${A}_1`, A],
        [`ch_${A}_2`, A],
      ],
    );
  });

  test("inboxctl replay --account replays that account's events only", async () => {
    await database.sql`update webhook_inbox set status = 'failed', last_error = 'test' where event_id like 'evt_acct_1Filter%'`;
    const run = await cli(['replay', 'stripe', '--account', B, '--json']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.json().replayed, 2);
    const rows = await database.sql`select event_id, status from webhook_inbox where event_id like 'evt_acct_1Filter%' order by event_id`;
    assert.deepEqual(
      rows.filter((r) => r.status === 'failed').map((r) => r.event_id),
      [`evt_${A}_1`, `evt_${A}_2`],
      "A's events were left alone",
    );
  });

  test("the dashboard's event list filters by account", async () => {
    const page = await (await fetch(`${service.baseUrl}/dashboard/events?account=${A}`)).text();
    assert.ok(page.includes(`evt_${A}_1`) && page.includes(`evt_${A}_2`), 'its events listed');
    assert.ok(!page.includes(`evt_${B}_1`), "not another account's");
  });

  test("an event's account is shown by inboxctl show and on the dashboard's event page", async () => {
    const shown = await cli(['show', 'stripe', `evt_${A}_1`]);
    assert.match(shown.out, new RegExp(`\\n {2}account {6}${A}\\n`));
    const [row] = await database.sql`select id from webhook_inbox where event_id = ${`evt_${A}_1`}`;
    const page = await (await fetch(`${service.baseUrl}/dashboard/events/${row!.id}`)).text();
    assert.ok(page.includes(`<dt>account</dt><dd><a href="/dashboard/events?account=${A}"><code>${A}</code></a></dd>`), 'the event page names its account');
  });

  test("inboxctl backfill --account lists the account's events on its behalf (Stripe-Account) and stores them with it", async () => {
    const created = Math.floor(Date.now() / 1000) - 1800;
    // Stripe's GET /v1/events for a connected account; the listed events carry no `account` here.
    const listed = JSON.parse(connectEvent(undefined, { id: 'evt_backfilled_a', type: 'charge.succeeded', chargeId: 'ch_backfilled_a', created })) as unknown;
    gateway.rules.push((request) =>
      request.pathname === '/v1/events'
        ? request.headers['stripe-account'] === A
          ? { status: 200, json: { object: 'list', data: [listed], has_more: false } }
          : { status: 403, json: {} }
        : undefined,
    );
    const run = await cli(['backfill', 'stripe', '--since', '2h', '--account', A, '--json']);
    assert.ok(run.code === 0 || run.code === 1, run.stderr);
    assert.equal(run.json().stored, 1);
    const [row] = await database.sql`select account, source from webhook_inbox where event_id = 'evt_backfilled_a'`;
    assert.deepEqual([row?.account, row?.source], [A, 'backfill']);
    assert.ok(gateway.requests.filter((r) => r.pathname === '/v1/events').every((r) => r.headers['stripe-account'] === A));
  });
});
