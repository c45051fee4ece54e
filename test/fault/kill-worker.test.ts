import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { testConfig } from '../support/config.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { distinctChargeEvents } from './support/deliveries.ts';
import { startFastSupervisor } from './support/fast-supervisor.ts';
import { deliverAll } from './support/gateway.ts';
import { DeliveryHistory, checkHistory, summarize } from './support/history.ts';
import { countUnfinished, readEffects, readStoredState } from './support/inbox-state.ts';
import { freePort } from './support/private-cluster.ts';
import { spawnService } from './support/service-process.ts';

const SECRET = 'whsec_fault_worker_secret';
const PREFIX = 'evt_worker_';
const EVENTS = 12;
const WORKER_ENV = { INBOX_ROLE: 'worker', WORKER_EXPIRE_IN_SECONDS: '10', WORKER_RETRY_DELAY_SECONDS: '1', WORKER_POLLING_INTERVAL_SECONDS: '0.5' };

let database: TestDatabase;
let receiver: TestService;
let supervisor: { stop(): Promise<void> };

before(async () => {
  database = await createTestDatabase();
  supervisor = await startFastSupervisor(database.url);
  // The receiver's queue settings apply to the jobs it inserts: the same 10-second expiry as the workers'.
  receiver = await startTestService(testConfig({ WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'receiver', WORKER_EXPIRE_IN_SECONDS: '10' }), database.url);
});

after(async () => {
  await receiver?.stop();
  await supervisor?.stop();
  await database?.drop();
});

test('kill -9 of a worker mid-job: the effect it wrote is rolled back, the job is retried, and the effect lands exactly once', async (t) => {
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const history = new DeliveryHistory();
  await deliverAll(distinctChargeEvents(PREFIX, EVENTS), { baseUrl: () => receiver.baseUrl, secret: SECRET, history, concurrency: 4 });
  const env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET, ...WORKER_ENV };

  // A worker whose handler applies the event, then holds its transaction open. Its held
  // transactions take its whole pool, so its /readyz never answers 200: wait for the holds instead.
  const slow = await spawnService({ entry: 'test/fault/support/slow-handler-main.ts', port: await freePort(), env, waitUntilReady: false });
  const holding = await waitFor(
    'the slow worker to hold events mid-transaction',
    () => {
      const lines = slow.linesIncluding('slow handler holding');
      return lines.length > 0 ? lines : undefined;
    },
    90_000,
  );
  await slow.kill();
  const heldIds = holding.map((line) => line.replace(/.*slow handler holding /, '').trim());
  const effectsAfterKill = await readEffects(database.sql, PREFIX);
  t.diagnostic(`${elapsed()}: killed the worker while it held ${heldIds.join(', ')}`);
  for (const id of heldIds) assert.equal(effectsAfterKill.get(id), 0, `${id}: the killed transaction's effect must not be visible`);

  // A healthy worker; the killed worker's jobs come back once they expire.
  const healthy = await spawnService({ entry: 'src/main.ts', port: await freePort(), env });
  try {
    t.diagnostic(`${elapsed()}: a healthy worker is up`);
    await waitFor('every event to be processed', async () => (await countUnfinished(database.sql, PREFIX)) === 0, 60_000, 200);
    t.diagnostic(`${elapsed()}: every event processed`);
  } finally {
    await healthy.stop();
  }
  const state = { ...(await readStoredState(database.sql, PREFIX)), effects: await readEffects(database.sql, PREFIX) };
  const result = checkHistory(history, state, { allowedStatuses: [200], requireProcessedOnce: true });
  t.diagnostic(summarize('worker kill -9 mid-job', result));
  const [retried] = await database.sql<{ n: number }[]>`
    select count(*)::int as n from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
    where i.event_id in ${database.sql(heldIds)} and j.retry_count > 0`;
  t.diagnostic(`jobs of the held events that ran again: ${retried!.n}`);
  assert.equal(retried!.n, heldIds.length, 'every job the kill interrupted was retried');
  assert.deepEqual(result.lost, []);
  assert.deepEqual(result.duplicated, [], 'no event took effect twice');
  assert.deepEqual(result.unexpected, []);
});
