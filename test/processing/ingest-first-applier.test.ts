import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createIngestFirstApplier } from '../../src/processing/ingest-first.ts';
import { createIngestPressureMeter } from '../../src/inbox/ingest-pressure.ts';

/** A clock that moves only when the applier sleeps: what it does is counted, never timed. */
function fakeTime() {
  let now = 0;
  const sleeps: number[] = [];
  return {
    now: () => now,
    advance: (ms: number) => (now += ms),
    sleeps,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
  };
}

function recordingApply() {
  const slices: number[][] = [];
  return { slices, apply: async (slice: number[]) => (slices.push(slice), slice.map((n) => n * 10)) };
}

const items = Array.from({ length: 23 }, (_, i) => i);

describe('ingest first: applying a fetched batch', () => {
  test('ingest quiet: the whole batch in one transaction, no pause', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: { underPressure: () => false }, sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    assert.deepEqual(await applier.apply(items, apply), items.map((n) => n * 10));
    assert.deepEqual([slices.length, time.sleeps.length], [1, 0]);
  });

  test('under pressure: slices in order, each after a pause, results in the order of the jobs', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: { underPressure: () => true }, sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    assert.deepEqual(await applier.apply(items, apply), items.map((n) => n * 10));
    assert.deepEqual(slices.map((s) => s.length), [5, 5, 5, 5, 3]);
    assert.deepEqual(slices.flat(), items);
    assert.equal(time.sleeps.length, 5);
  });

  test('pressure that never lifts holds a batch at most maxHoldMs, then applies the rest at once: the backlog always drains', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: { underPressure: () => true }, sliceSize: 2, pauseMs: 40, maxHoldMs: 100, ...time });
    const { slices, apply } = recordingApply();
    await applier.apply(items, apply);
    assert.deepEqual(slices.flat(), items, 'every job applied, once, in order');
    assert.equal(time.sleeps.reduce((a, b) => a + b, 0), 100, 'paused exactly up to the bound, never past it');
    assert.deepEqual(slices.map((s) => s.length), [2, 2, 19]);
  });

  test('pressure lifting mid-batch: the rest of the batch at once', async () => {
    const time = fakeTime();
    let pressed = true;
    const applier = createIngestFirstApplier({ pressure: { underPressure: () => pressed }, sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    await applier.apply(items, async (slice) => {
      if (slices.length === 1) pressed = false;
      return apply(slice);
    });
    assert.deepEqual(slices.map((s) => s.length), [5, 5, 13]);
  });

  test('a shutdown (the job signal aborted) stops the pauses: the batch is applied at once', async () => {
    const time = fakeTime();
    const controller = new AbortController();
    const applier = createIngestFirstApplier({ pressure: { underPressure: () => true }, sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    await applier.apply(items, async (slice) => (controller.abort(), apply(slice)), controller.signal);
    assert.deepEqual(slices.map((s) => s.length), [5, 18]);
  });

  test('two workers under pressure: one slice in flight at a time', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: { underPressure: () => true }, sliceSize: 3, pauseMs: 10, maxHoldMs: 10_000, now: time.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) });
    let inFlight = 0;
    let mostInFlight = 0;
    const apply = async (slice: number[]) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 15));
      inFlight -= 1;
      return slice;
    };
    const [a, b] = await Promise.all([applier.apply(items.slice(0, 12), apply), applier.apply(items.slice(12), apply)]);
    assert.deepEqual([...a, ...b], items);
    assert.equal(mostInFlight, 1);
  });
});

describe('ingest pressure, as the group commit reports it', () => {
  test('a deep queue or a slow commit is pressure for quietMs, then it lifts', () => {
    const time = fakeTime();
    const meter = createIngestPressureMeter({ ackLatencyMs: 10, queueDepth: 32, quietMs: 1000, now: time.now });
    meter.deliveryQueued(32);
    meter.batchCommitted(10);
    assert.equal(meter.underPressure(), false, 'at the thresholds: not yet');
    meter.deliveryQueued(33);
    assert.equal(meter.underPressure(), true);
    time.advance(999);
    assert.equal(meter.underPressure(), true);
    time.advance(1);
    assert.equal(meter.underPressure(), false, 'quiet for quietMs');
    meter.batchCommitted(11);
    assert.equal(meter.underPressure(), true, 'a slow commit');
  });

  test('INGEST_PRESSURE_ACK_MS=0: every commit is pressure', () => {
    const time = fakeTime();
    const meter = createIngestPressureMeter({ ackLatencyMs: 0, queueDepth: 32, quietMs: 1000, now: time.now });
    meter.batchCommitted(0);
    assert.equal(meter.underPressure(), true);
  });
});
