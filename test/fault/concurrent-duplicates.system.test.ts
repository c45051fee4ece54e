import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { distinctChargeEvents } from './support/deliveries.ts';
import { deliverAll } from './support/gateway.ts';
import { DeliveryHistory, checkHistory, summarize } from './support/history.ts';
import { countJobs, countUnfinished, readEffects, readStoredState } from './support/inbox-state.ts';

const SECRET = 'whsec_fault_duplicates_secret';
const EVENTS = 20;
const COPIES = 100;

const database = useTestDatabase();
const services: TestService[] = [];

setup(async () => {
  // Two instances, each with its own pools, pg-boss and workers, on one database.
  for (let i = 0; i < 2; i += 1) {
    services.push(await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'all' } }));
  }
});

test('100 concurrent copies of each of 20 events across two instances: 20 rows, 20 jobs, 20 effects', async (t) => {
  const prefix = 'evt_dup_';
  const events = distinctChargeEvents(prefix, EVENTS);
  const copies = Array.from({ length: COPIES }, () => events).flat();
  const history = new DeliveryHistory();
  let sent = 0;
  await deliverAll(copies, {
    // Copies alternate between the instances, so every event races itself on both.
    baseUrl: () => services[sent++ % 2]!.baseUrl,
    secret: SECRET,
    history,
    concurrency: 200,
    giveUpAfterMs: 60_000,
  });
  const jobs = await countJobs(database.sql, prefix);
  assert.deepEqual(jobs, { rows: EVENTS, jobs: EVENTS, rowsWithoutJob: 0 }, 'one row and one job per event, whatever the copies');

  await waitFor(async () => (await countUnfinished(database.sql, prefix)) === 0, { message: 'the 20 events to be processed', timeoutMs: 60_000 });
  const state = { ...(await readStoredState(database.sql, prefix)), effects: await readEffects(database.sql, prefix) };
  const result = checkHistory(history, state, { allowedStatuses: [200], requireProcessedOnce: true });
  t.diagnostic(summarize('2 instances × 100 copies × 20 events', result));
  assert.equal(history.attempts.filter((a) => a.outcome === 200).length, EVENTS * COPIES, 'every copy got a 200');
  assert.equal(result.stored, EVENTS);
  assert.deepEqual(result.lost, []);
  assert.deepEqual(result.duplicated, [], 'no event has a second row or a second effect');
  assert.deepEqual(result.unexpected, []);
  assert.equal(
    [...state.effects.values()].reduce((a, b) => a + b, 0),
    EVENTS,
    '20 effects in all',
  );
});
