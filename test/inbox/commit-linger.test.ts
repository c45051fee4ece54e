import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { type CommitLinger, createCommitLinger } from '../../src/inbox/commit-linger.ts';
import { createConflictRecorder } from '../../src/inbox/conflicting-duplicates.ts';
import { createGroupCommitIngestor } from '../../src/inbox/group-commit.ts';
import { createLogger } from '../../src/logger.ts';
import { builtInDrivers } from '../../src/gateways/registry.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { webhookJobInsert } from '../../src/queue/embedded-job-insert.ts';
import { testWorkerConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { incomingChargeSucceeded } from '../support/incoming-event.ts';
import { setup } from '../support/setup.ts';

describe('commit linger: when a delivery waits for company', () => {
  function linger(lingerMs = 4, maxBatchSize = 100) {
    const clock = { now: 1_000 };
    const l = createCommitLinger({ lingerMs, maxBatchSize, now: () => clock.now });
    /** A delivery arrives `afterMs` after the clock's now. */
    const arrive = (afterMs = 0) => {
      clock.now += afterMs;
      l.arrived();
      return clock.now;
    };
    return { clock, linger: l, arrive };
  }

  /** Steady traffic, one delivery every `gapMs`, long enough to settle the usual gap. */
  function steady(arrive: (afterMs?: number) => number, gapMs: number, count = 30): number {
    let last = 0;
    for (let i = 0; i < count; i += 1) last = arrive(gapMs);
    return last;
  }

  test('0 ms: never', () => {
    const { linger: off, arrive } = linger(0);
    assert.equal(off.begin(arrive(), 1), 0);
  });

  test('steady arrivals: the first delivery at a free slot waits out the linger from its arrival, in steps while deliveries keep coming', () => {
    const { clock, linger: l, arrive } = linger(4, 10);
    steady(arrive, 1);
    const first = arrive(1);
    const wait = l.begin(first, 1);
    const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 0.05, `${what}: ${actual}, not ${expected}`);
    // The usual gap is 1 ms: patience is 2 ms past the last arrival, renewed by each one.
    near(wait, 2, 'the first wait');
    arrive(1);
    clock.now += 0.5;
    near(l.extend(first, 2), 1.5, 'renewed by the arrival');
    arrive(0.5);
    clock.now += 1.5;
    near(l.extend(first, 3), 0.5, 'capped: the first delivery may not wait past 4 ms in all');
    assert.equal(l.extend(first, 10), 0, 'a full batch goes at once');
  });

  test('a delivery that already waited the linger (through the batch ahead of it) commits at once', () => {
    const { clock, linger: l, arrive } = linger(4);
    steady(arrive, 1);
    const oldest = arrive(1);
    clock.now += 5;
    assert.equal(l.begin(oldest, 3), 0);
  });

  test('arrivals that stopped: no waiting past about twice the usual gap (a fixed set of senders has all sent)', () => {
    const { clock, linger: l, arrive } = linger(4);
    steady(arrive, 0.1);
    const oldest = arrive(0.1);
    clock.now += 1.5;
    assert.equal(l.begin(oldest, 2), 0);
  });

  test('a batch with company (8 deliveries) goes at once: under heavier traffic the queue behind a batch in flight is that large', () => {
    const { linger: l, arrive } = linger(4);
    steady(arrive, 1);
    const oldest = arrive(1);
    assert.ok(l.begin(oldest, 7) > 0);
    assert.equal(l.begin(oldest, 8), 0);
  });

  test('a wait nobody joined is not repeated until the probe interval has passed; then one is tried', () => {
    const { clock, linger: l, arrive } = linger(4);
    steady(arrive, 1.3);
    assert.ok(l.begin(arrive(1.3), 1) > 0);
    l.ended(1, 1);
    const failedAt = clock.now;
    for (const later of [5, 100, 900]) assert.equal(l.begin(arrive(failedAt + later - clock.now), 1), 0, `${later} ms after the failed wait`);
    clock.now = failedAt + 1_000;
    assert.ok(l.begin(arrive(), 1) > 0, 'the probe');
    l.ended(1, 1);
    assert.equal(l.begin(arrive(10), 1), 0);
  });

  test('while waits gather company, every free-slot delivery waits; when traffic turns sequential they stop', () => {
    const { linger: l, arrive } = linger(4);
    steady(arrive, 1);
    for (let i = 0; i < 20; i += 1) {
      assert.ok(l.begin(arrive(1), 1) > 0, `wait ${i}`);
      l.ended(1, 4);
    }
    let waits = 0;
    for (let i = 0; i < 50; i += 1) {
      if (l.begin(arrive(2), 1) > 0) {
        waits += 1;
        l.ended(1, 1);
      }
    }
    // The running average falls below one joiner within a few empty waits, then only probes remain.
    assert.ok(waits >= 1 && waits <= 12, `${waits} waits after the traffic turned sequential`);
  });
});

describe('commit linger in the group commit (real PostgreSQL)', () => {
  const database = useTestDatabase();
  let pool: DatabaseHandle;
  let boss: PgBoss;
  const stripe = builtInDrivers.stripe!.create({ name: 'stripe', secrets: ['whsec_linger'], signatureToleranceSeconds: 300, options: {} });

  setup(async () => {
    pool = database.connect('linger-test', 3);
    boss = await startBoss({
      url: database.url,
      role: 'receiver',
      worker: testWorkerConfig,
      poolSize: 2,
      connectTimeoutSeconds: 2,
      logger: createLogger('silent'),
    });
    database.onTeardown(() => boss.stop({ graceful: false, close: true }));
  });

  /** Rows written by one statement share its transaction id: the number of commits that stored these events. */
  async function commitsFor(prefix: string): Promise<number> {
    const [row] = await database.sql<
      { commits: number }[]
    >`select count(distinct xmin::text)::int as commits from webhook_inbox where event_id like ${`${prefix}%`}`;
    return row!.commits;
  }

  async function groupCommit(linger: CommitLinger, options: { maxBatchSize?: number; commitDeadlineMs?: number } = {}) {
    return createGroupCommitIngestor({
      sql: pool.sql,
      jobs: await webhookJobInsert(boss),
      conflicts: createConflictRecorder({ driverOf: () => stripe }),
      maxBatchSize: options.maxBatchSize ?? 100,
      maxConcurrentBatches: 1,
      commitDeadlineMs: options.commitDeadlineMs ?? 30_000,
      linger,
    });
  }

  test('deliveries arriving one after another while the first waits share its commit', async () => {
    const commit = await groupCommit(createCommitLinger({ lingerMs: 50, maxBatchSize: 100, now: () => performance.now() }));
    const outcomes: Promise<unknown>[] = [];
    for (let i = 0; i < 6; i += 1) {
      outcomes.push(commit.ingest(incomingChargeSucceeded(`evt_linger_burst_${i}`)));
      await new Promise(setImmediate);
    }
    await Promise.all(outcomes);
    assert.equal(await commitsFor('evt_linger_burst_'), 1);
  });

  test('a sequential sender waits once, then its deliveries commit at once', async () => {
    const real = createCommitLinger({ lingerMs: 50, maxBatchSize: 100, now: () => performance.now() });
    const waits: number[] = [];
    const spy: CommitLinger = {
      arrived: () => real.arrived(),
      begin(oldest, queued) {
        const wait = real.begin(oldest, queued);
        waits.push(wait);
        return wait;
      },
      extend: (oldest, queued) => real.extend(oldest, queued),
      ended: (began, size) => real.ended(began, size),
    };
    const commit = await groupCommit(spy);
    for (let i = 0; i < 5; i += 1) await commit.ingest(incomingChargeSucceeded(`evt_linger_sequential_${i}`));
    assert.equal(waits.length, 5);
    assert.equal(waits.filter((w) => w > 0).length, 1, `waits: ${waits.map((w) => w.toFixed(1)).join(', ')}`);
    assert.equal(await commitsFor('evt_linger_sequential_'), 5);
  });

  test('a batch that fills up while it waits commits without waiting out the linger', async () => {
    // The deadline is far below the linger: a delivery that waited it out would get 503 and fail the test.
    const commit = await groupCommit(createCommitLinger({ lingerMs: 60_000, maxBatchSize: 5, now: () => performance.now() }), {
      maxBatchSize: 5,
      commitDeadlineMs: 3_000,
    });
    const outcomes = await Promise.all(Array.from({ length: 5 }, (_, i) => commit.ingest(incomingChargeSucceeded(`evt_linger_full_${i}`))));
    assert.deepEqual(
      outcomes.map((o) => o.kind),
      ['accepted', 'accepted', 'accepted', 'accepted', 'accepted'],
    );
    assert.equal(await commitsFor('evt_linger_full_'), 1);
  });
});
