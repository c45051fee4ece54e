import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { sampleValue, scrape } from '../observability/prometheus-text.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { SECRET, storeEvent, waitUntilSettled } from './harness.ts';

const database = useTestDatabase();
const now = Math.floor(Date.now() / 1000);
/** A bucket boundary of inbox_worker_batch_events, so the histogram tells a slice from a bigger batch. */
const SLICE = 5;

/**
 * Any delivery waiting for its transaction is pressure (a queue deeper than 0), and pressure lasts
 * ten minutes of the service's clock: nothing here depends on how fast this machine is. Batches of
 * 20, four workers (test/support/config.ts), slices of 5 while yielding.
 */
const pressureEnv = {
  WEBHOOK_SECRET_STRIPE: SECRET,
  INGEST_PRESSURE_QUEUE_DEPTH: '0',
  INGEST_PRESSURE_ACK_MS: '60000',
  INGEST_QUIET_MS: String(10 * 60_000),
  WORKER_YIELD_BATCH_SIZE: String(SLICE),
  WORKER_YIELD_PAUSE_MS: '5',
};

interface WorkerBatches {
  full: { batches: number; events: number; largerThanSlice: number };
  yielding: { batches: number; events: number; largerThanSlice: number };
  keepingPace: { batches: number; events: number; largerThanSlice: number };
  pauses: number;
  pressure: number | undefined;
}

async function workerBatches(baseUrl: string): Promise<WorkerBatches> {
  const text = await scrape(baseUrl);
  const mode = (name: 'full' | 'yielding' | 'keeping_pace') => {
    const batches = sampleValue(text, 'inbox_worker_batch_events_count', { mode: name }) ?? 0;
    const upToSlice = sampleValue(text, 'inbox_worker_batch_events_bucket', { mode: name, le: String(SLICE) }) ?? 0;
    return { batches, events: sampleValue(text, 'inbox_worker_batch_events_sum', { mode: name }) ?? 0, largerThanSlice: batches - upToSlice };
  };
  return {
    full: mode('full'),
    yielding: mode('yielding'),
    keepingPace: mode('keeping_pace'),
    pauses: sampleValue(text, 'inbox_worker_yield_pauses_total') ?? 0,
    pressure: sampleValue(text, 'inbox_ingest_pressure'),
  };
}

function deliveries(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const id = `evt_${prefix}_${i}`;
    return { id, body: chargeEvent({ id, type: 'charge.succeeded', chargeId: `ch_${prefix}_${i}`, created: now }) };
  });
}

async function postAll(baseUrl: string, events: { body: string }[]): Promise<void> {
  for (const response of await Promise.all(events.map((e) => postStripe(baseUrl, e.body, SECRET)))) assert.equal(response.status, 200);
}

/** A backlog left by a worker outage: rows and jobs written straight to the database, one insert for every job (no delivery, so no pressure). */
async function storeBacklog(boss: PgBoss, prefix: string, count: number) {
  const events = deliveries(prefix, count);
  const ids = [];
  for (const e of events)
    ids.push(await storeEvent(database.sql, { eventId: e.id, type: 'charge.succeeded', chargeId: `ch_${e.id}`, created: now, body: e.body }));
  await boss.insert(
    WEBHOOKS_QUEUE,
    ids.map((inboxId, i) => ({ data: { inboxId }, singletonKey: `stripe:ch_${events[i]!.id}` })),
  );
  return events.map((e) => e.id);
}

/** 60 deliveries posted to `receiverUrl` at once, all processed, every one in a whole batch by the workers behind `workerUrl`. */
async function assertBurstNeverYielded(prefix: string, receiverUrl: string, workerUrl: string): Promise<void> {
  const burst = deliveries(prefix, 60);
  await postAll(receiverUrl, burst);
  await waitUntilSettled(
    database.sql,
    burst.map((e) => e.id),
    60_000,
  );
  const seen = await workerBatches(workerUrl);
  assert.deepEqual([seen.pressure, seen.yielding.batches, seen.pauses, seen.full.events], [0, 0, 0, burst.length]);
}

test('under sustained ingest pressure the workers apply in yielding slices, and every event is still processed; once ingest has been quiet they apply whole batches again', async () => {
  let clockSkewMs = 0;
  const service = await startTestService({ database, env: pressureEnv, clock: () => new Date(Date.now() + clockSkewMs) });
  try {
    const burst = deliveries('pressed', 60);
    await postAll(service.baseUrl, burst);
    const settled = await waitUntilSettled(
      database.sql,
      burst.map((e) => e.id),
      60_000,
    );
    assert.deepEqual(
      settled.filter((r) => r.status !== 'processed'),
      [],
    );
    const pressed = await workerBatches(service.baseUrl);
    assert.equal(pressed.pressure, 2, 'the receiver is saturated: deliveries queue up');
    assert.equal(pressed.full.batches, 0, 'no whole batch applied while ingest is under pressure');
    assert.equal(pressed.yielding.events, burst.length, 'every event applied, in yielding slices');
    assert.equal(pressed.yielding.largerThanSlice, 0, `no slice larger than WORKER_YIELD_BATCH_SIZE (${SLICE})`);
    assert.ok(pressed.pauses > 0, 'the workers paused for the receiver');

    // Ten minutes of the service's clock without a delivery: ingest is quiet.
    clockSkewMs += 11 * 60_000;
    await waitFor(async () => (await workerBatches(service.baseUrl)).pressure === 0, { message: 'the pressure gauge to read 0' });
    const backlog = await storeBacklog(service.boss, 'quiet', 50);
    await waitUntilSettled(database.sql, backlog, 60_000);
    const quiet = await workerBatches(service.baseUrl);
    assert.equal(quiet.yielding.events, pressed.yielding.events, 'no yielding once ingest is quiet');
    assert.equal(quiet.full.events, backlog.length);
    // The first fetch sees all 50 jobs (one insert): it gets a whole batch of 20.
    assert.ok(quiet.full.largerThanSlice > 0, `a batch larger than a yielding slice: ${JSON.stringify(quiet.full)}`);
  } finally {
    await service.stop();
  }
});

test('acks only slow, deliveries not queueing up: the workers keep pace with what arrives (slices carry the new arrivals) instead of falling behind it', async () => {
  // Every commit is a sign of slow acks; no queue is ever deep enough to be saturation.
  const service = await startTestService({ database, env: { ...pressureEnv, INGEST_PRESSURE_ACK_MS: '0', INGEST_PRESSURE_QUEUE_DEPTH: '100000' } });
  try {
    const burst = deliveries('slow', 60);
    await postAll(service.baseUrl, burst);
    const settled = await waitUntilSettled(
      database.sql,
      burst.map((e) => e.id),
      60_000,
    );
    assert.deepEqual(
      settled.filter((r) => r.status !== 'processed'),
      [],
    );
    const seen = await workerBatches(service.baseUrl);
    assert.equal(seen.pressure, 1, 'the gauge says: acks slow, the receiver keeping up');
    assert.deepEqual([seen.full.batches, seen.yielding.batches], [0, 0], 'neither whole batches nor bare yielding slices');
    assert.equal(seen.keepingPace.events, burst.length, 'every event applied keeping pace');
    assert.ok(
      seen.keepingPace.largerThanSlice > 0,
      `slices grow past WORKER_YIELD_BATCH_SIZE (${SLICE}) with what arrived: ${JSON.stringify(seen.keepingPace)}`,
    );
    assert.ok(seen.pauses > 0, 'still a pause before each slice');
  } finally {
    await service.stop();
  }
});

test('INGEST_FIRST=off: the same pressure, and the workers never yield', async () => {
  const service = await startTestService({ database, env: { ...pressureEnv, INGEST_FIRST: 'off' } });
  try {
    await assertBurstNeverYielded('off', service.baseUrl, service.baseUrl);
  } finally {
    await service.stop();
  }
});

test('a worker-only instance never yields, however pressed the receivers feeding it', async () => {
  const receiver = await startTestService({ database, env: { ...pressureEnv, INBOX_ROLE: 'receiver' } });
  const worker = await startTestService({ database, env: { ...pressureEnv, INBOX_ROLE: 'worker' } });
  try {
    await assertBurstNeverYielded('split', receiver.baseUrl, worker.baseUrl);
  } finally {
    await worker.stop();
    await receiver.stop();
  }
});
