import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { paymentsHandler } from '../../src/processing/payments-handler.ts';
import { type RunningService, startService } from '../../src/service.ts';
import { testConfig } from '../support/config.ts';
import { createTestDatabase, type CreatedDatabase as TestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitForLegacy as waitFor } from '../support/wait.ts';
import { insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

const SECRET = 'whsec_incident_secret';
let database: TestDatabase;
let service: RunningService;
let baseUrl: string;
let env: Record<string, string>;
const created = Math.floor(Date.now() / 1000);

// The deployed handler has a bug for the evt_bug_* events until the "fix" is deployed; every
// apply that gets through is counted, to prove each event changes the payment exactly once.
let bugDeployed = true;
const applies = new Map<string, number>();
const paymentsWithBug: EventHandler = {
  ...paymentsHandler,
  async apply(tx, events) {
    if (bugDeployed && events.some(({ event }) => event.stored.eventId.startsWith('evt_bug_'))) throw new TypeError("Cannot read properties of undefined (reading 'amount')");
    const outcomes = await paymentsHandler.apply(tx, events);
    for (const { event } of events) applies.set(event.stored.eventId, (applies.get(event.stored.eventId) ?? 0) + 1);
    return outcomes;
  },
};

async function statusesOf(eventIds: string[]) {
  const rows = await database.sql`select event_id, status from webhook_inbox where event_id = any(${eventIds}) order by event_id`;
  return Object.fromEntries(rows.map((r) => [r.event_id, r.status]));
}

before(async () => {
  database = await createTestDatabase();
  // One attempt, so a bug fails an event at once; the sweep every minute, so the cron runs in the test.
  const config = testConfig({ WEBHOOK_SECRET_STRIPE: SECRET, WORKER_MAX_ATTEMPTS: '1', SWEEP_CRON: '* * * * *' });
  service = await startService({ config, databaseUrl: database.url, logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'), handlers: createHandlerRegistry([paymentsWithBug]) });
  baseUrl = `http://127.0.0.1:${service.port}`;
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  // A pending event whose job was lost (stored, no job), older than the sweep's 5 minutes and
  // younger than the 10-minute stats alert, so the playbook's final check is not about it.
  await insertInboxRows(database.sql, [
    { eventId: 'evt_lost_job', eventType: 'charge.succeeded', resourceId: 'ch_lost', status: 'pending', receivedAt: minutesAgo(6), rawBody: Buffer.from(chargeEvent({ id: 'evt_lost_job', type: 'charge.succeeded', chargeId: 'ch_lost', created })) },
  ]);
});

after(async () => {
  await service?.stop();
  await database?.drop();
});

describe('the incident playbook: handler bug → fix → replay → verify', () => {
  test('failed events are replayed once after the fix and each changes its payment exactly once', async () => {
    const ids = ['evt_bug_1', 'evt_bug_2'];
    for (const [i, id] of ids.entries()) {
      const response = await postStripe(baseUrl, chargeEvent({ id, type: 'charge.succeeded', chargeId: `ch_bug_${i}`, created }), SECRET);
      assert.equal(response.status, 200);
    }
    await waitFor('both events failed', async () => Object.values(await statusesOf(ids)).every((s) => s === 'failed') && Object.keys(await statusesOf(ids)).length === 2, 30_000);

    const alert = await runInboxctl(['stats', '--provider', 'stripe', '--json'], env);
    assert.equal(alert.code, 1, 'failed events are an alert');
    assert.equal(alert.json().failed, 2);
    assert.match(alert.json().topErrors[0].error, /Cannot read properties of undefined/);

    bugDeployed = false; // the fix is deployed
    const replay = await runInboxctl(['replay', 'stripe', '--status', 'failed'], env);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.out, /2 events back to pending and queued/);
    await waitFor('both events processed', async () => Object.values(await statusesOf(ids)).every((s) => s === 'processed'), 30_000);

    const again = await runInboxctl(['replay', 'stripe', '--status', 'failed', '--json'], env);
    assert.equal(again.json().replayed, 0, 'nothing is failed any more');
    const payments = await database.sql`select gateway_charge_id, status from payments where gateway_charge_id like 'ch_bug_%' order by 1`;
    assert.deepEqual(payments.map((p) => [p.gateway_charge_id, p.status]), [['ch_bug_0', 'paid'], ['ch_bug_1', 'paid']]);
    const [live] = await database.sql`
      select count(*)::int as n from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
      where j.name = 'webhooks' and i.event_id = any(${ids}) and j.state < 'completed'`;
    assert.equal(live!.n, 0, 'no job left that could apply them again');
    assert.deepEqual(Object.fromEntries(ids.map((id) => [id, applies.get(id)])), { evt_bug_1: 1, evt_bug_2: 1 });

    const verify = await runInboxctl(['stats', '--provider', 'stripe'], env);
    assert.equal(verify.code, 0, verify.out + verify.stderr);
    assert.match(verify.out, /^OK: nothing failed, nothing pending too long\.$/m);
  });
});

describe('the sweeper, on the service cron', () => {
  // Started with the service in before(): the cron's first pass can be ~30 s after start.
  test('picks up the pending event whose job was lost, and it is processed', async () => {
    await waitFor('the lost-job event processed', async () => (await statusesOf(['evt_lost_job'])).evt_lost_job === 'processed', 90_000, 500);
    assert.equal(applies.get('evt_lost_job'), 1);
    const [sweeps] = await database.sql`select count(*)::int as n from pgboss.job where name = 'inbox-sweep' and state = 'completed'`;
    assert.ok(sweeps!.n >= 1, 'a sweep job ran');
  });
});
