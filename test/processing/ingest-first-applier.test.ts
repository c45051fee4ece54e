import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createIngestFirstApplier } from '../../src/processing/ingest-first.ts';
import { type IngestPressureLevel, createIngestPressureMeter } from '../../src/inbox/ingest-pressure.ts';

/** A receiver at a fixed level that committed nothing: the bare slices of a saturated one, or none when quiet. */
const receiver = (level: IngestPressureLevel | (() => IngestPressureLevel), committed: () => number = () => 0) => ({
  level: typeof level === 'function' ? level : () => level,
  committedEvents: committed,
});

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
  return {
    slices,
    apply: async (slice: number[]) => {
      slices.push(slice);
      return slice.map((n) => n * 10);
    },
  };
}

const items = Array.from({ length: 23 }, (_, i) => i);

describe('ingest first: applying a fetched batch', () => {
  test('ingest quiet: the whole batch in one transaction, no pause', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: receiver('quiet'), sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    assert.deepEqual(
      await applier.apply(items, apply),
      items.map((n) => n * 10),
    );
    assert.deepEqual([slices.length, time.sleeps.length], [1, 0]);
  });

  test('under pressure: slices in order, each after a pause, results in the order of the jobs', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: receiver('saturated'), sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    assert.deepEqual(
      await applier.apply(items, apply),
      items.map((n) => n * 10),
    );
    assert.deepEqual(
      slices.map((s) => s.length),
      [5, 5, 5, 5, 3],
    );
    assert.deepEqual(slices.flat(), items);
    assert.equal(time.sleeps.length, 5);
  });

  test('pressure that never lifts holds a batch at most maxHoldMs, then applies the rest at once: the backlog always drains', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({ pressure: receiver('saturated'), sliceSize: 2, pauseMs: 40, maxHoldMs: 100, ...time });
    const { slices, apply } = recordingApply();
    await applier.apply(items, apply);
    assert.deepEqual(slices.flat(), items, 'every job applied, once, in order');
    assert.equal(
      time.sleeps.reduce((a, b) => a + b, 0),
      100,
      'paused exactly up to the bound, never past it',
    );
    assert.deepEqual(
      slices.map((s) => s.length),
      [2, 2, 19],
    );
  });

  test('acks slow while the receiver keeps up: each slice carries what it committed since the last one, on top of the bare slice', async () => {
    const time = fakeTime();
    let committed = 0;
    const applier = createIngestFirstApplier({ pressure: receiver('slow', () => committed), sliceSize: 2, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const slices: number[] = [];
    const many = Array.from({ length: 40 }, (_, i) => i);
    await applier.apply(many, async (slice) => {
      slices.push(slice.length);
      committed += 7; // the receiver takes in 7 events while a slice is applied
      return slice;
    });
    // The first slice owes nothing yet; each next one carries the 7 that arrived meanwhile.
    assert.deepEqual(slices, [2, 9, 9, 9, 9, 2]);
  });

  test('saturated: bare slices, while what arrives is owed; paid once deliveries stop queueing up, wiped once ingest is quiet', async () => {
    const time = fakeTime();
    let committed = 0;
    const levels: IngestPressureLevel[] = ['slow', 'saturated', 'saturated', 'slow', 'slow', 'quiet'];
    let slice = 0;
    const applier = createIngestFirstApplier({
      pressure: receiver(
        () => levels[Math.min(slice, levels.length - 1)]!,
        () => committed,
      ),
      sliceSize: 2,
      pauseMs: 50,
      maxHoldMs: 10_000,
      ...time,
    });
    const sizes: number[] = [];
    await applier.apply(
      Array.from({ length: 60 }, (_, i) => i),
      async (items) => {
        sizes.push(items.length);
        slice += 1;
        committed += 5;
        return items;
      },
    );
    // slow: 2 (nothing owed yet); saturated twice: bare 2s while 5 + 5 more are owed; slow: 2 + 15, then 2 + 5; quiet: the rest at once.
    assert.deepEqual(sizes, [2, 2, 2, 17, 7, 30]);
  });

  test('pressure lifting mid-batch: the rest of the batch at once', async () => {
    const time = fakeTime();
    let pressed = true;
    const applier = createIngestFirstApplier({
      pressure: receiver(() => (pressed ? 'saturated' : 'quiet')),
      sliceSize: 5,
      pauseMs: 50,
      maxHoldMs: 10_000,
      ...time,
    });
    const { slices, apply } = recordingApply();
    await applier.apply(items, async (slice) => {
      if (slices.length === 1) pressed = false;
      return apply(slice);
    });
    assert.deepEqual(
      slices.map((s) => s.length),
      [5, 5, 13],
    );
  });

  test('a shutdown (the job signal aborted) stops the pauses: the batch is applied at once', async () => {
    const time = fakeTime();
    const controller = new AbortController();
    const applier = createIngestFirstApplier({ pressure: receiver('saturated'), sliceSize: 5, pauseMs: 50, maxHoldMs: 10_000, ...time });
    const { slices, apply } = recordingApply();
    await applier.apply(
      items,
      async (slice) => {
        controller.abort();
        return apply(slice);
      },
      controller.signal,
    );
    assert.deepEqual(
      slices.map((s) => s.length),
      [5, 18],
    );
  });

  test('two workers under pressure: one slice in flight at a time', async () => {
    const time = fakeTime();
    const applier = createIngestFirstApplier({
      pressure: receiver('saturated'),
      sliceSize: 3,
      pauseMs: 10,
      maxHoldMs: 10_000,
      now: time.now,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    });
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
  test('slow commits are slow acks, a queue deep on average is saturation, each for quietMs; saturation wins while both are recent', () => {
    const time = fakeTime();
    const meter = createIngestPressureMeter({ ackLatencyMs: 10, queueDepth: 16, quietMs: 1000, now: time.now });
    meter.batchCommitted(10, 1);
    assert.equal(meter.level(), 'quiet', 'at the threshold: not yet');
    meter.batchCommitted(11, 1);
    assert.equal(meter.level(), 'slow');
    // A stall: 60 deliveries queue up one behind the other, then the queue empties again.
    for (let depth = 1; depth <= 60; depth += 1) meter.requestQueued(depth);
    for (let i = 0; i < 500; i += 1) meter.requestQueued(1);
    assert.equal(meter.level(), 'slow', 'a spike is no saturation: the mean barely moved');
    // 64 senders at full speed: about half of them wait at any time, for as long as it lasts.
    let deliveries = 0;
    while (meter.level() !== 'saturated') {
      meter.requestQueued(32);
      deliveries += 1;
    }
    assert.ok(deliveries < 1000, `saturated within a second's deliveries: ${deliveries}`);
    time.advance(999);
    assert.equal(meter.level(), 'saturated');
    time.advance(1);
    assert.equal(meter.level(), 'quiet', 'quiet for quietMs after the last sign of either');
    meter.batchCommitted(11, 1);
    time.advance(999);
    assert.equal(meter.level(), 'slow');
    assert.equal(meter.committedEvents(), 3, 'every committed event counted, slow or not');
  });

  test('INGEST_PRESSURE_QUEUE_DEPTH=0: any delivery waiting is saturation', () => {
    const time = fakeTime();
    const meter = createIngestPressureMeter({ ackLatencyMs: 10, queueDepth: 0, quietMs: 1000, now: time.now });
    meter.requestQueued(1);
    assert.equal(meter.level(), 'saturated');
  });

  test('INGEST_PRESSURE_ACK_MS=0: every commit is a sign of slow acks', () => {
    const time = fakeTime();
    const meter = createIngestPressureMeter({ ackLatencyMs: 0, queueDepth: 32, quietMs: 1000, now: time.now });
    meter.batchCommitted(0, 4);
    assert.equal(meter.level(), 'slow');
  });
});
