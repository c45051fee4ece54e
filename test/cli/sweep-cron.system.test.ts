/**
 * The incident playbook's other half (incident.test.ts has the replay): the sweeper, on the
 * service's own cron, finds the pending event whose job was lost and it is processed. pg-boss's
 * cron runs on the wall clock and its first pass can be a minute after start, hence the system tier.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { createApplyCounter } from '../support/apply-counter.ts';
import { useTestDatabase } from '../support/database.ts';
import { paymentsHandlerWithBug } from '../support/handlers.ts';
import { startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { insertInboxRows, minutesAgo } from '../operations/harness.ts';

const SECRET = 'whsec_incident_secret';
const database = useTestDatabase();
const created = Math.floor(Date.now() / 1000);
const applies = createApplyCounter();

async function statusesOf(eventIds: string[]) {
  const rows = await database.sql`select event_id, status from webhook_inbox where event_id = any(${eventIds}) order by event_id`;
  return Object.fromEntries(rows.map((r) => [r.event_id, r.status]));
}

setup(async () => {
  // The sweep every minute, so the cron runs in the test.
  const serviceEnv = { WEBHOOK_SECRET_STRIPE: SECRET, WORKER_MAX_ATTEMPTS: '1', SWEEP_CRON: '* * * * *' };
  await startTestService({
    database,
    env: serviceEnv,
    handlers: createHandlerRegistry([
      applies.handler(
        'incident',
        paymentsHandlerWithBug('evt_bug_', () => true),
      ),
    ]),
  });
  // A pending event whose job was lost (stored, no job), older than the sweep's 5 minutes.
  await insertInboxRows(database.sql, [
    {
      eventId: 'evt_lost_job',
      eventType: 'charge.succeeded',
      resourceId: 'ch_lost',
      status: 'pending',
      receivedAt: minutesAgo(6),
      rawBody: Buffer.from(chargeEvent({ id: 'evt_lost_job', type: 'charge.succeeded', chargeId: 'ch_lost', created })),
    },
  ]);
});

describe('the sweeper, on the service cron', () => {
  // Started with the service in before(): the cron's first pass can be ~30 s after start.
  test('picks up the pending event whose job was lost, and it is processed', async () => {
    await waitFor(async () => (await statusesOf(['evt_lost_job'])).evt_lost_job === 'processed', {
      message: 'the lost-job event processed',
      timeoutMs: 90_000,
      intervalMs: 500,
    });
    assert.equal(applies.appliedOf('evt_lost_job'), 1);
    const [sweeps] = await database.sql`select count(*)::int as n from pgboss.job where name = 'inbox-sweep' and state = 'completed'`;
    assert.ok(sweeps!.n >= 1, 'a sweep job ran');
  });
});
