import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { paymentsHandlerWithBug } from '../support/handlers.ts';
import { useTestDatabase } from '../support/database.ts';
import { createApplyCounter } from '../support/apply-counter.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { runInboxctl } from './run-inboxctl.ts';

const SECRET = 'whsec_incident_secret';
const database = useTestDatabase();
let service: TestService;
let env: Record<string, string>;
const created = Math.floor(Date.now() / 1000);

// The deployed handler has a bug for the evt_bug_* events until the "fix" is deployed; every
// apply that gets through is counted, to prove each event changes the payment exactly once.
let bugDeployed = true;
const paymentsWithBug = paymentsHandlerWithBug('evt_bug_', () => bugDeployed);
const applies = createApplyCounter();

async function statusesOf(eventIds: string[]) {
  const rows = await database.sql`select event_id, status from webhook_inbox where event_id = any(${eventIds}) order by event_id`;
  return Object.fromEntries(rows.map((r) => [r.event_id, r.status]));
}

setup(async () => {
  // One attempt, so a bug fails an event at once. (The sweeper on the service's cron, the playbook's
  // other half, waits for a cron minute: sweep-cron.system.test.ts.)
  const serviceEnv = { WEBHOOK_SECRET_STRIPE: SECRET, WORKER_MAX_ATTEMPTS: '1' };
  service = await startTestService({ database, env: serviceEnv, handlers: createHandlerRegistry([applies.handler('incident', paymentsWithBug)]) });
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
});

describe('the incident playbook: handler bug → fix → replay → verify', () => {
  test('failed events are replayed once after the fix and each changes its payment exactly once', async () => {
    const ids = ['evt_bug_1', 'evt_bug_2'];
    for (const [i, id] of ids.entries()) {
      const response = await postStripe(service.baseUrl, chargeEvent({ id, type: 'charge.succeeded', chargeId: `ch_bug_${i}`, created }), SECRET);
      assert.equal(response.status, 200);
    }
    await waitFor(async () => Object.values(await statusesOf(ids)).every((s) => s === 'failed') && Object.keys(await statusesOf(ids)).length === 2, {
      message: 'both events failed',
      timeoutMs: 30_000,
    });

    const alert = await runInboxctl(['stats', '--provider', 'stripe', '--json'], env);
    assert.equal(alert.code, 1, 'failed events are an alert');
    assert.equal(alert.json().failed, 2);
    assert.match(alert.json().topErrors[0].error, /Cannot read properties of undefined/);

    bugDeployed = false; // the fix is deployed
    const replay = await runInboxctl(['replay', 'stripe', '--status', 'failed'], env);
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.out, /2 events back to pending and queued/);
    await waitFor(async () => Object.values(await statusesOf(ids)).every((s) => s === 'processed'), { message: 'both events processed', timeoutMs: 30_000 });

    const again = await runInboxctl(['replay', 'stripe', '--status', 'failed', '--json'], env);
    assert.equal(again.json().replayed, 0, 'nothing is failed any more');
    const payments = await database.sql`select gateway_charge_id, status from payments where gateway_charge_id like 'ch_bug_%' order by 1`;
    assert.deepEqual(
      payments.map((p) => [p.gateway_charge_id, p.status]),
      [
        ['ch_bug_0', 'paid'],
        ['ch_bug_1', 'paid'],
      ],
    );
    const [live] = await database.sql`
      select count(*)::int as n from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
      where j.name = 'webhooks' and i.event_id = any(${ids}) and j.state < 'completed'`;
    assert.equal(live!.n, 0, 'no job left that could apply them again');
    assert.deepEqual(Object.fromEntries(ids.map((id) => [id, applies.appliedOf(id)])), { evt_bug_1: 1, evt_bug_2: 1 });

    const verify = await runInboxctl(['stats', '--provider', 'stripe'], env);
    assert.equal(verify.code, 0, verify.out + verify.stderr);
    assert.match(verify.out, /^OK: nothing failed, nothing pending too long\.$/m);
  });
});
