import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { type DatabaseHandle, connectDatabase } from '../../src/db/client.ts';
import { StorageUnavailableError } from '../../src/errors.ts';
import { createConflictRecorder } from '../../src/inbox/conflicting-duplicates.ts';
import { type IngestOutcome, type Ingestor, createGroupCommitIngestor } from '../../src/inbox/group-commit.ts';
import type { IncomingEvent } from '../../src/inbox/insert-events.ts';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { testWorkerConfig } from '../support/config.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { countJobs } from './support/inbox-state.ts';

let database: TestDatabase;
const pools: DatabaseHandle[] = [];
const bosses: PgBoss[] = [];

before(async () => {
  database = await createTestDatabase();
  // A failure injected in the database: any transaction that inserts this event id aborts.
  await database.sql.unsafe(`
    create function fail_poison_event() returns trigger language plpgsql as $$
    begin
      if new.event_id like 'evt_poison%' then raise exception 'injected failure for %', new.event_id; end if;
      return new;
    end $$;
    create trigger fail_poison_event before insert on webhook_inbox for each row execute function fail_poison_event();`);
});

after(async () => {
  for (const boss of bosses) await boss.stop({ graceful: false, close: true });
  for (const pool of pools) await pool.close();
  await database?.drop();
});

/** An ingestor with its own pool and pg-boss, as one service instance has. */
async function newIngestor(options: { maxBatchSize: number; maxConcurrentBatches: number }): Promise<Ingestor> {
  const handle = connectDatabase({ url: database.url, poolSize: options.maxConcurrentBatches + 2, connectTimeoutSeconds: 2, applicationName: 'group-commit-test' });
  const boss = await startBoss({ url: database.url, role: 'receiver', worker: testWorkerConfig, poolSize: 2, connectTimeoutSeconds: 2, logger: createLogger('silent') });
  pools.push(handle);
  bosses.push(boss);
  const conflicts = createConflictRecorder({ driverOf: () => undefined });
  return createGroupCommitIngestor({ sql: handle.sql, boss, conflicts, commitDeadlineMs: 30_000, ...options });
}

function incoming(eventId: string): IncomingEvent {
  const payload = { id: eventId, object: 'event', type: 'charge.succeeded', data: { object: { id: `ch_${eventId}` } } };
  return {
    provider: 'stripe',
    event: { eventId, eventType: 'charge.succeeded', resourceId: `ch_${eventId}`, occurredAt: new Date(), payload },
    rawBody: Buffer.from(JSON.stringify(payload)),
    fingerprint: eventId,
  };
}

function shuffled<T>(items: T[], seed: number): T[] {
  const result = [...items];
  let state = seed;
  for (let i = result.length - 1; i > 0; i -= 1) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [result[i], result[j]] = [result[j]!, result[i]!];
  }
  return result;
}

async function rowIds(prefix: string): Promise<Map<string, number>> {
  const rows = await database.sql<{ event_id: string; id: string }[]>`select event_id, id from webhook_inbox where event_id like ${`${prefix}%`}`;
  return new Map(rows.map((r) => [r.event_id, Number(r.id)]));
}

describe('group commit', () => {
  test('per-request outcomes stay exact under concurrency: one "accepted" per new event, carrying its row id; every other copy "duplicate"', async () => {
    const [first, second] = [await newIngestor({ maxBatchSize: 16, maxConcurrentBatches: 3 }), await newIngestor({ maxBatchSize: 7, maxConcurrentBatches: 2 })];
    const stored = Array.from({ length: 50 }, (_, i) => `evt_outcome_old_${i}`);
    for (const outcome of await Promise.all(stored.map((id) => first!.ingest(incoming(id))))) assert.equal(outcome.kind, 'accepted');
    const fresh = Array.from({ length: 200 }, (_, i) => `evt_outcome_new_${i}`);
    // Each new event three times (often inside one batch, often across batches and across the two
    // instances), every stored one once more, in a scrambled order, all submitted at once.
    const requests = shuffled([...fresh, ...fresh, ...fresh, ...stored], 42);
    const outcomes = await Promise.all(
      requests.map(async (id, i) => ({ id, outcome: await (i % 2 === 0 ? first! : second!).ingest(incoming(id)) })),
    );

    const ids = await rowIds('evt_outcome_');
    const accepted = new Map<string, IngestOutcome[]>();
    for (const { id, outcome } of outcomes) {
      if (outcome.kind === 'accepted') accepted.set(id, [...(accepted.get(id) ?? []), outcome]);
    }
    assert.equal(ids.size, 250, 'one row per distinct event');
    for (const id of fresh) {
      assert.deepEqual(accepted.get(id), [{ kind: 'accepted', inboxId: ids.get(id) }], `${id}: exactly one accepted, with its row id`);
    }
    for (const id of stored) assert.equal(accepted.get(id), undefined, `${id} was stored before: only duplicates`);
    assert.equal(outcomes.filter((o) => o.outcome.kind === 'duplicate').length, requests.length - fresh.length);
    const jobs = await countJobs(database.sql, 'evt_outcome_');
    assert.deepEqual(jobs, { rows: 250, jobs: 250, rowsWithoutJob: 0 }, 'one job per row, none for a duplicate');
  });

  test('a batch that fails rejects only its own requests (503 storage_unavailable); every other request commits', async () => {
    const maxBatchSize = 10;
    const ingestor = await newIngestor({ maxBatchSize, maxConcurrentBatches: 2 });
    const ids = Array.from({ length: 100 }, (_, i) => (i === 37 ? 'evt_poison_37' : `evt_batch_${i}`));
    const settled = await Promise.all(
      ids.map((id) => ingestor.ingest(incoming(id)).then((outcome) => ({ id, outcome }), (error: unknown) => ({ id, error }))),
    );
    const failed = settled.filter((s) => 'error' in s);
    const stored = await rowIds('evt_');
    for (const s of failed) {
      assert.ok(s.error instanceof StorageUnavailableError, `${s.id}: a failed batch is a 503`);
      assert.equal(s.error.status, 503);
      assert.equal(stored.has(s.id), false, `${s.id} failed, so it must not be stored`);
    }
    assert.ok(failed.some((s) => s.id === 'evt_poison_37'), 'the poisoned event fails');
    assert.ok(failed.length <= maxBatchSize, `only the poisoned event's batch fails (${failed.length} failed)`);
    for (const s of settled.filter((s) => 'outcome' in s)) {
      assert.equal(stored.has(s.id), true, `${s.id} was accepted, so it is stored`);
    }
    assert.equal(settled.length - failed.length, [...stored.keys()].filter((id) => id.startsWith('evt_batch_')).length);
    // The innocent members of the failed batch were not acknowledged: their retry now commits.
    const retried = await Promise.all(failed.filter((s) => s.id !== 'evt_poison_37').map((s) => ingestor.ingest(incoming(s.id))));
    assert.ok(retried.every((outcome) => outcome.kind === 'accepted'));
  });
});
