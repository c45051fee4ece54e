import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { distinctChargeEvents } from './support/deliveries.ts';
import { deliverAll } from './support/gateway.ts';
import { DeliveryHistory, checkHistory, summarize } from './support/history.ts';
import { countUnfinished, readEffects, readStoredState } from './support/inbox-state.ts';
import { freePort } from '../support/free-port.ts';
import { spawnService } from './support/service-process.ts';

const SECRET = 'whsec_fault_worker_secret';
const PREFIX = 'evt_worker_';
const EVENTS = 12;
// Expiry stays at its production default, far beyond anything this test waits for: a job the kill
// interrupted can only come back through its heartbeat, found by the healthy worker's own
// supervisor (src/queue/boss.ts), not by a test helper.
const EXPIRE_SECONDS = 300;
const HEARTBEAT_SECONDS = 10;
const QUEUE_ENV = { WORKER_EXPIRE_IN_SECONDS: String(EXPIRE_SECONDS), WORKER_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS) };
const WORKER_ENV = { INBOX_ROLE: 'worker', ...QUEUE_ENV, WORKER_RETRY_DELAY_SECONDS: '1', WORKER_POLLING_INTERVAL_SECONDS: '0.5' };

const database = useTestDatabase();

// The queue's settings are copied onto each job at insert: the receiver's are the ones these jobs get.
const receiver = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'receiver', ...QUEUE_ENV } });

interface HeldJob {
  state: string;
  retry_count: number;
  heartbeat_seconds: number | null;
  active_seconds: number;
  started_ms: number;
}

/** The processing jobs of `eventIds`, as pg-boss holds them. */
async function readJobs(eventIds: string[]): Promise<HeldJob[]> {
  return database.sql<HeldJob[]>`
    select j.state::text as state, j.retry_count, j.heartbeat_seconds,
           extract(epoch from now() - j.started_on)::float8 as active_seconds,
           (extract(epoch from j.started_on) * 1000)::float8 as started_ms
    from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
    where j.name = 'webhooks' and i.event_id in ${database.sql(eventIds)}`;
}

test('kill -9 of a worker mid-job: its heartbeat stops, the job is retried long before expiry, and the effect lands exactly once', async (t) => {
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const history = new DeliveryHistory();
  await deliverAll(distinctChargeEvents(PREFIX, EVENTS), { baseUrl: () => receiver.baseUrl, secret: SECRET, history, concurrency: 4 });
  const env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET, ...WORKER_ENV };

  // A worker whose handler applies the event, then holds its transaction open. Its held
  // transactions take its whole pool, so its /readyz never answers 200: wait for the holds instead.
  const slow = await spawnService({ entry: 'test/fault/support/slow-handler-main.ts', port: await freePort(), env, waitUntilReady: false });
  const holding = await waitFor(
    () => {
      const lines = slow.linesIncluding('slow handler holding');
      return lines.length > 0 ? lines : undefined;
    },
    { message: 'the slow worker to hold events mid-transaction', timeoutMs: 90_000 },
  );
  const heldIds = holding.map((line) => line.replace(/.*slow handler holding /, '').trim());

  // Up before the kill, so the time measured below is the crash detection and the retry, not a start.
  const healthy = await spawnService({ entry: 'src/main.ts', port: await freePort(), env });
  try {
    t.diagnostic(`${elapsed()}: a healthy worker is up; the slow worker holds ${heldIds.join(', ')}`);
    // A live worker's heartbeats keep its jobs: held past heartbeat + a supervise interval, none is taken away.
    const alive = await waitFor(
      async () => {
        const jobs = await readJobs(heldIds);
        return jobs.length === heldIds.length && jobs.every((j) => j.active_seconds > HEARTBEAT_SECONDS + 6) ? jobs : undefined;
      },
      { message: 'the held jobs to have been active longer than their heartbeat allows without one', timeoutMs: 90_000, intervalMs: 250 },
    );
    for (const job of alive) {
      assert.deepEqual(
        [job.state, job.retry_count, job.heartbeat_seconds],
        ['active', 0, HEARTBEAT_SECONDS],
        'a job whose worker is alive keeps its first attempt',
      );
    }

    await slow.kill();
    const killedAt = Date.now();
    const effectsAfterKill = await readEffects(database.sql, PREFIX);
    t.diagnostic(`${elapsed()}: killed the worker while it held ${heldIds.length} events`);
    for (const id of heldIds) assert.equal(effectsAfterKill.get(id), 0, `${id}: the killed transaction's effect must not be visible`);

    // Expiry counts from the claim, not from the kill: the first moment it could retry these jobs.
    const expiresAt = Math.min(...alive.map((j) => j.started_ms)) + EXPIRE_SECONDS * 1000;
    await waitFor(async () => (await countUnfinished(database.sql, PREFIX)) === 0, {
      message: `every event to be processed before the held jobs' ${EXPIRE_SECONDS} s expiry (so through the heartbeat)`,
      timeoutMs: Math.max(0, expiresAt - Date.now()),
      intervalMs: 100,
    });
    const doneAt = Date.now();
    const retries = await readJobs(heldIds);
    const killToRetryMs = Math.max(...retries.map((j) => j.started_ms)) - killedAt;
    t.diagnostic(
      `kill -> retried jobs claimed: ${(killToRetryMs / 1000).toFixed(1)} s; kill -> every event processed: ${((doneAt - killedAt) / 1000).toFixed(1)} s ` +
        `(heartbeat ${HEARTBEAT_SECONDS} s; expiry would have retried them ${((expiresAt - killedAt) / 1000).toFixed(1)} s after the kill)`,
    );
    assert.ok(doneAt < expiresAt, `processed ${doneAt - expiresAt} ms after the jobs expired: that is expiry, not the heartbeat`);
  } finally {
    await healthy.stop();
  }
  const state = { ...(await readStoredState(database.sql, PREFIX)), effects: await readEffects(database.sql, PREFIX) };
  const result = checkHistory(history, state, { allowedStatuses: [200], requireProcessedOnce: true });
  t.diagnostic(summarize('worker kill -9 mid-job', result));
  const retried = (await readJobs(heldIds)).filter((j) => j.retry_count > 0);
  t.diagnostic(`jobs of the held events that ran again: ${retried.length}`);
  assert.equal(retried.length, heldIds.length, 'every job the kill interrupted was retried');
  assert.deepEqual(result.lost, []);
  assert.deepEqual(result.duplicated, [], 'no event took effect twice');
  assert.deepEqual(result.unexpected, []);
});
