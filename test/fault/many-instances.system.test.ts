import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type Scenario, referenceOutcome, scenarioArb, stripeEvents } from '../domain/charge-scenarios.ts';
import { paymentOf } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { deliverAll, type SignedDelivery } from './support/gateway.ts';
import { DeliveryHistory, checkHistory, summarize } from './support/history.ts';
import { countUnfinished, readEffects, readStoredState } from './support/inbox-state.ts';
import { freePort } from './support/private-cluster.ts';
import { type ServiceProcess, spawnService } from './support/service-process.ts';

/**
 * The deployment issue 15 scales out to: 3 receiver containers and 2 worker containers on one
 * PostgreSQL, under mixed load (new events, a gateway's duplicates, each charge's events out of
 * order), while one worker is killed -9 in the middle of a batch and one receiver is restarted.
 */
const SECRET = 'whsec_many_instances_secret';
const CHARGES = 100;
const BASE_SECONDS = 1_760_000_000;
const PREFIX = 'evt_ch_many_';
const HEARTBEAT_SECONDS = 10;
// Expiry far beyond the test: the killed worker's batch can only come back through its heartbeat.
const QUEUE_ENV = { WORKER_EXPIRE_IN_SECONDS: '300', WORKER_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS) };
const WORKER_ENV = { INBOX_ROLE: 'worker', ...QUEUE_ENV, WORKER_POLLING_INTERVAL_SECONDS: '0.5', WORKER_BATCH_SIZE: '20', WORKER_RETRY_DELAY_SECONDS: '1' };
/** The doomed worker holds each batch's transaction this long after applying it: a kill right after it says so lands mid-batch. */
const HOLD_MS = 400;

const database = useTestDatabase();
let env: Record<string, string>;
const receivers: ServiceProcess[] = [];
const workers: ServiceProcess[] = [];

/** A seeded shuffle (mulberry32), so a failure replays with the same arrival order. */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

const startReceiver = async (port?: number) => spawnService({ port: port ?? (await freePort()), env: { ...env, INBOX_ROLE: 'receiver', ...QUEUE_ENV } });

setup(async () => {
  database.onTeardown(() => Promise.all([...receivers, ...workers].map((instance) => instance.stop())));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  const started = await Promise.all([
    startReceiver(),
    startReceiver(),
    startReceiver(),
    spawnService({ port: await freePort(), env: { ...env, ...WORKER_ENV } }),
    // Readiness is not awaited: its held transactions may take the pool /readyz needs.
    spawnService({
      entry: 'test/fault/support/slow-handler-main.ts',
      port: await freePort(),
      env: { ...env, ...WORKER_ENV, SLOW_HANDLER_MS: String(HOLD_MS) },
      waitUntilReady: false,
    }),
  ]);
  receivers.push(...started.slice(0, 3));
  workers.push(...started.slice(3));
});

test('3 receivers and 2 workers on one PostgreSQL: a worker killed -9 mid-batch and a receiver restarted lose no acknowledged event, apply none twice, and every payment ends right', async (t) => {
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const scenarios: Scenario[] = fc.sample(scenarioArb, { seed: 15, numRuns: CHARGES });
  const events = scenarios.flatMap((scenario, i) => stripeEvents(scenario, `ch_many_${i}`, BASE_SECONDS));
  // Every charge's events interleaved with the others', out of true order, and a fifth sent twice.
  const deliveries: SignedDelivery[] = shuffled([...events, ...events.filter((_, i) => i % 5 === 0)], 15);
  t.diagnostic(`${CHARGES} charges, ${events.length} events, ${deliveries.length} deliveries`);

  const history = new DeliveryHistory();
  const delivering = deliverAll(deliveries, {
    // A load balancer: each attempt to the next receiver, so a restarted one's retries land elsewhere.
    baseUrl: (eventId, attempt) => receivers[(eventId.length * 7 + Number(eventId.at(-1)) + attempt) % receivers.length]!.baseUrl,
    secret: SECRET,
    history,
    concurrency: 12,
  });

  const [, doomed] = workers as [ServiceProcess, ServiceProcess];
  const held = await waitFor(
    () => {
      const lines = doomed.linesIncluding('slow handler holding');
      return lines.length > 0 ? lines : undefined;
    },
    { message: 'the doomed worker to be holding a batch', timeoutMs: 45_000, intervalMs: 10 },
  );
  // The restart overlaps the kill and the load: its in-flight deliveries must be answered or retried.
  const restarting = receivers[1]!;
  const restarted = restarting.stop().then(async () => (receivers[1] = await startReceiver(restarting.port)));
  await doomed.kill();
  const heldIds = [...new Set(held.map((line) => line.replace(/.*slow handler holding /, '').trim()))];
  const stillPending = await database.sql<{ event_id: string }[]>`
    select event_id from webhook_inbox where event_id in ${database.sql(heldIds)} and status = 'pending'`;
  t.diagnostic(`${elapsed()}: killed the worker -9 while it held ${stillPending.length} applied, uncommitted events`);
  assert.ok(stillPending.length > 0, 'the kill landed mid-batch: some events it had applied were not committed');

  await restarted;
  t.diagnostic(`${elapsed()}: receiver 2 restarted on its port`);
  await delivering;
  t.diagnostic(`${elapsed()}: every delivery answered 200`);
  await waitFor(async () => (await countUnfinished(database.sql, PREFIX)) === 0, {
    message: 'every stored event to be processed',
    timeoutMs: 45_000,
    intervalMs: 100,
  });

  t.diagnostic(`${elapsed()}: every event processed`);
  const effects = await readEffects(database.sql, PREFIX);
  const state = { ...(await readStoredState(database.sql, PREFIX)), effects };
  const result = checkHistory(history, state, { allowedStatuses: [200] });
  t.diagnostic(summarize('3 receivers, 2 workers', result));
  assert.equal(result.acknowledged, events.length, 'every event acknowledged in the end');
  assert.deepEqual(result.lost, [], 'no acknowledged event missing from the inbox');
  assert.deepEqual(result.duplicated, [], 'no event stored twice or applied twice');
  assert.deepEqual(result.unexpected, []);
  const unsettled = [...state.statuses!].filter(([, status]) => status !== 'processed' && status !== 'ignored');
  assert.deepEqual(unsettled, [], 'every event processed or ignored, none failed');

  const retried = await database.sql<{ event_id: string }[]>`
    select distinct i.event_id from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
    where j.name = 'webhooks' and j.retry_count > 0 and i.event_id in ${database.sql(stillPending.map((r) => r.event_id))}`;
  assert.equal(retried.length, stillPending.length, 'each event of the killed batch came back through its heartbeat and ran again');
  for (const { event_id } of stillPending) assert.ok((effects.get(event_id) ?? 0) <= 1, `${event_id}: applied at most once`);

  const wrong: string[] = [];
  for (const [i, scenario] of scenarios.entries()) {
    const expected = referenceOutcome(scenario);
    const payment = await paymentOf(database.sql, `ch_many_${i}`);
    const actual = { status: payment?.status, amount: payment?.amount, amountRefunded: payment?.amountRefunded };
    if (JSON.stringify(actual) !== JSON.stringify({ status: expected.status, amount: expected.amount, amountRefunded: expected.amountRefunded })) {
      wrong.push(`ch_many_${i}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
    }
  }
  assert.deepEqual(wrong, [], 'every payment ends where its true order ends');
});
