import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { startFastSupervisor } from './support/fast-supervisor.ts';
import { checkHistory, summarize } from './support/history.ts';
import { countJobs, countUnfinished, readEffects, readStoredState } from './support/inbox-state.ts';
import { deliverThroughKills } from './support/kill-schedule.ts';

const SECRET = 'whsec_fault_kill_secret';
const DELIVERIES = 2000;
const KILL_AFTER_ACKS = [300, 900, 1500];
// Jobs a kill left `active` are retried once they expire (10 s, the least the config allows).
const WORKER_ENV = { WORKER_EXPIRE_IN_SECONDS: '10', WORKER_RETRY_DELAY_SECONDS: '1', WORKER_POLLING_INTERVAL_SECONDS: '0.5' };

const database = useTestDatabase();
let supervisor: { stop(): Promise<void> };

setup(async () => {
  supervisor = await startFastSupervisor(database.url);
  database.onTeardown(() => supervisor.stop());
});

test('kill -9 three times during 2,000 deliveries: every acknowledged event is stored with its job and processed exactly once (0 lost, 0 double effects)', async (t) => {
  const prefix = 'evt_kill_';
  const run = await deliverThroughKills({
    entry: 'src/main.ts',
    databaseUrl: database.url,
    secret: SECRET,
    prefix,
    deliveries: DELIVERIES,
    killAfterAcks: KILL_AFTER_ACKS,
    env: WORKER_ENV,
  });
  try {
    assert.equal(run.kills, 3, 'the service was killed three times during the load');
    const jobs = await countJobs(database.sql, prefix);
    t.diagnostic(`rows ${jobs.rows}, jobs ${jobs.jobs}, rows without a job ${jobs.rowsWithoutJob}`);
    assert.equal(jobs.rowsWithoutJob, 0, 'every stored event has its job (insert and enqueue share the COMMIT)');
    // The last instance keeps running: it processes the backlog, including the jobs the kills left active.
    await waitFor(async () => (await countUnfinished(database.sql, prefix)) === 0, {
      message: 'every stored event to be processed',
      timeoutMs: 120_000,
      intervalMs: 250,
    });
  } finally {
    await run.service.stop();
  }
  const state = { ...(await readStoredState(database.sql, prefix)), effects: await readEffects(database.sql, prefix) };
  const result = checkHistory(run.history, state, { allowedStatuses: [200, 503], requireProcessedOnce: true });
  t.diagnostic(summarize('kill -9 ×3', result));
  assert.equal(result.acknowledged, DELIVERIES, 'the gateway got a 200 for every event in the end');
  assert.deepEqual(result.lost, [], 'lost: acknowledged but not stored, or never processed');
  assert.deepEqual(result.duplicated, [], 'duplicated: a second row, or a second effect (payment_transitions per inbox row)');
  assert.deepEqual(result.unexpected, [], 'unexpected rows or answers');
});

test('control: the same kill test against a service that answers 200 before committing reports lost > 0', async (t) => {
  const prefix = 'evt_control_';
  const run = await deliverThroughKills({
    entry: 'test/fault/support/ack-before-commit-main.ts',
    databaseUrl: database.url,
    secret: SECRET,
    prefix,
    deliveries: DELIVERIES,
    killAfterAcks: KILL_AFTER_ACKS,
    env: { ...WORKER_ENV, INBOX_ROLE: 'receiver' },
  });
  // A clean stop flushes the control's buffer: what is missing after it, the kills took.
  await run.service.stop();
  const result = checkHistory(run.history, await readStoredState(database.sql, prefix), { allowedStatuses: [200, 503] });
  t.diagnostic(summarize('control (ack before commit), kill -9 ×3', result));
  assert.equal(run.kills, 3);
  assert.equal(result.acknowledged, DELIVERIES);
  assert.ok(result.lost.length > 0, 'the checker must report the events the kills took out of the unflushed buffer');
  assert.deepEqual(result.duplicated, []);
  assert.deepEqual(result.unexpected, []);
});
