import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EventUnstorableError, StorageUnavailableError } from '../../src/errors.ts';
import { createConflictRecorder } from '../../src/inbox/conflicting-duplicates.ts';
import { type IngestOutcome, type Ingestor, createGroupCommitIngestor } from '../../src/inbox/group-commit.ts';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { webhookJobInsert } from '../../src/queue/embedded-job-insert.ts';
import { testWorkerConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { countJobs } from './support/inbox-state.ts';
import { incomingChargeSucceeded } from '../support/incoming-event.ts';

const database = useTestDatabase();

setup(async () => {
  // Failures injected in the database for chosen event ids, each counted (a sequence is not
  // rolled back with the transaction it was used in): how often the poisoned row was tried tells
  // whether its batch was split to find it. A data error (check_violation, class 23), an
  // availability error (disk_full, class 53) and a plain RAISE (P0001, no class the inbox knows).
  await database.sql.unsafe(`
    create sequence poison_attempts;
    create function fail_poison_event() returns trigger language plpgsql as $$
    begin
      if new.event_id like 'evt_poison%' then
        perform nextval('poison_attempts');
        raise exception 'injected failure for %', new.event_id using errcode = 'check_violation';
      end if;
      if new.event_id like 'evt_unavailable%' then
        perform nextval('poison_attempts');
        raise exception 'injected outage for %', new.event_id using errcode = 'disk_full';
      end if;
      if new.event_id like 'evt_raise%' then
        perform nextval('poison_attempts');
        raise exception 'injected plain raise for %', new.event_id;
      end if;
      return new;
    end $$;
    create trigger fail_poison_event before insert on webhook_inbox for each row execute function fail_poison_event();
    -- The same data error, raised only at COMMIT, the end of the batch's one statement: by then its
    -- rows, keys and jobs were all written, and must all be rolled back and written again once, by the split.
    create function fail_at_commit() returns trigger language plpgsql as $$
    begin
      if new.event_id like 'evt_commitpoison%' then
        perform nextval('poison_attempts');
        raise exception 'injected commit-time failure for %', new.event_id using errcode = 'check_violation';
      end if;
      return null;
    end $$;
    create constraint trigger fail_at_commit after insert on webhook_inbox deferrable initially deferred
      for each row execute function fail_at_commit();`);
});

/** An ingestor with its own pool and pg-boss, as one service instance has. */
async function newIngestor(options: { maxBatchSize: number; maxConcurrentBatches: number }): Promise<Ingestor> {
  const handle = database.connect('group-commit-test', options.maxConcurrentBatches + 2);
  const boss = await startBoss({
    url: database.url,
    role: 'receiver',
    worker: testWorkerConfig,
    poolSize: 2,
    connectTimeoutSeconds: 2,
    logger: createLogger('silent'),
  });
  database.onTeardown(() => boss.stop({ graceful: false, close: true }));
  const conflicts = createConflictRecorder({ driverOf: () => undefined });
  return createGroupCommitIngestor({ sql: handle.sql, jobs: await webhookJobInsert(boss), conflicts, commitDeadlineMs: 30_000, ...options });
}

const incoming = incomingChargeSucceeded;

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
    const outcomes = await Promise.all(requests.map(async (id, i) => ({ id, outcome: await (i % 2 === 0 ? first! : second!).ingest(incoming(id)) })));

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

  /** Attempts counted since the last call. */
  let attemptsSeen = 0;
  async function poisonAttempts(): Promise<number> {
    const [row] = await database.sql<{ n: string }[]>`select case when is_called then last_value else 0 end as n from poison_attempts`;
    const total = Number(row!.n);
    const since = total - attemptsSeen;
    attemptsSeen = total;
    return since;
  }

  /** 25 valid deliveries, the poisoned one, 25 more: all submitted at once, so they share batches. */
  async function aroundFiftyValid(ingestor: Ingestor, prefix: string, poisonedId: string) {
    const ids = Array.from({ length: 50 }, (_, i) => `${prefix}${i}`);
    ids.splice(25, 0, poisonedId);
    const settled = await Promise.all(
      ids.map((id) =>
        ingestor.ingest(incoming(id)).then(
          (outcome) => ({ id, outcome }),
          (error: unknown) => ({ id, error }),
        ),
      ),
    );
    const poisoned = settled.find((s) => s.id === poisonedId)!;
    return { poisoned, others: settled.filter((s) => s !== poisoned) };
  }

  test('a delivery the database refuses for its data (SQLSTATE class 23) fails alone with 400 event_unstorable; the 50 around it commit', async () => {
    const ingestor = await newIngestor({ maxBatchSize: 64, maxConcurrentBatches: 1 });
    const { poisoned, others } = await aroundFiftyValid(ingestor, 'evt_isolated_', 'evt_poison_1');
    assert.ok('error' in poisoned, 'the poisoned delivery is not acknowledged');
    assert.ok(poisoned.error instanceof EventUnstorableError, `a data error is the delivery's own: ${String(poisoned.error)}`);
    assert.equal(poisoned.error.status, 400);
    assert.doesNotMatch(poisoned.error.message, /injected|check|violat/i, "a generic message, never the driver's text");
    const stored = await rowIds('evt_isolated_');
    for (const s of others) {
      assert.ok('outcome' in s && s.outcome.kind === 'accepted', `${s.id}: ${'error' in s ? String(s.error) : 'not accepted'}`);
      assert.equal(s.outcome.inboxId, stored.get(s.id), `${s.id} carries its row id`);
    }
    assert.equal(stored.size, 50, '50 rows');
    assert.equal((await rowIds('evt_poison_')).size, 0, 'no row for the poisoned one');
    assert.deepEqual(await countJobs(database.sql, 'evt_isolated_'), { rows: 50, jobs: 50, rowsWithoutJob: 0 });
    assert.ok((await poisonAttempts()) > 1, 'it shared a batch with valid deliveries, and splitting the batch found it');
  });

  test('an availability error (class 53: disk full) answers 503 for its whole batch without splitting it', async () => {
    const ingestor = await newIngestor({ maxBatchSize: 64, maxConcurrentBatches: 1 });
    await poisonAttempts();
    const { poisoned, others } = await aroundFiftyValid(ingestor, 'evt_outage_', 'evt_unavailable_1');
    const failed = [poisoned, ...others].filter((s) => 'error' in s);
    assert.ok(failed.length > 1, 'the batch it was in failed');
    for (const s of failed) {
      assert.ok(s.error instanceof StorageUnavailableError, `${s.id}: a 503`);
      assert.doesNotMatch(s.error.message, /injected|disk|postgres/i, "a generic message, never the driver's text");
    }
    assert.equal(await poisonAttempts(), 1, 'one attempt: an outage is not bisected');
    const stored = await rowIds('evt_outage_');
    for (const s of others) assert.equal(stored.has(s.id), 'outcome' in s, `${s.id}: stored exactly when acknowledged`);
    // The innocent members of the failed batch were not acknowledged: their resend commits.
    const retried = await Promise.all(failed.filter((s) => s !== poisoned).map((s) => ingestor.ingest(incoming(s.id))));
    assert.ok(retried.every((outcome) => outcome.kind === 'accepted'));
  });

  test('a batch split to find a poisoned delivery records a conflicting duplicate in it exactly once, and every valid delivery commits', async () => {
    const ingestor = await newIngestor({ maxBatchSize: 64, maxConcurrentBatches: 1 });
    const storedId = 'evt_split_conflict_stored';
    assert.equal((await ingestor.ingest(incoming(storedId))).kind, 'accepted');
    await poisonAttempts();
    // Same id, another meaning (a refund where a success was stored): a conflicting duplicate.
    const contradiction = incoming(storedId);
    contradiction.event = { ...contradiction.event, eventType: 'charge.refunded' };
    contradiction.fingerprint = `${storedId}:refunded`;
    const ids = Array.from({ length: 50 }, (_, i) => `evt_split_conflict_${i}`);
    const deliveries = ids.map((id) => incoming(id));
    deliveries.splice(25, 0, incoming('evt_poison_split_conflict'), contradiction);
    const settled = await Promise.all(
      deliveries.map((d) =>
        ingestor.ingest(d).then(
          (outcome) => ({ d, outcome }),
          (error: unknown) => ({ d, error }),
        ),
      ),
    );

    assert.ok((await poisonAttempts()) > 1, 'the batch was split to find the poisoned delivery');
    const byId = (id: string) => settled.filter((s) => s.d.event.eventId === id);
    assert.ok('error' in byId('evt_poison_split_conflict')[0]!, 'the poisoned delivery is refused');
    const [conflict] = byId(storedId);
    assert.ok(
      conflict && 'outcome' in conflict && conflict.outcome.kind === 'conflicting_duplicate',
      'the contradiction is answered as a conflicting duplicate',
    );
    const recorded = await database.sql`select c.id from webhook_inbox_conflicts c join webhook_inbox i on i.id = c.inbox_id where i.event_id = ${storedId}`;
    assert.equal(recorded.length, 1, 'recorded once, however often splitting the batch retried it');
    for (const id of ids) {
      const [s] = byId(id);
      assert.ok(s && 'outcome' in s && s.outcome.kind === 'accepted', `${id} committed`);
    }
    assert.equal((await rowIds('evt_split_conflict_')).size, 51, '50 new rows and the stored one');
  });

  test("an error of no known class (a trigger's plain RAISE) is found the same way, but answered 503: a resend may pass", async () => {
    const ingestor = await newIngestor({ maxBatchSize: 64, maxConcurrentBatches: 1 });
    await poisonAttempts();
    const { poisoned, others } = await aroundFiftyValid(ingestor, 'evt_unknown_class_', 'evt_raise_1');
    assert.ok('error' in poisoned && poisoned.error instanceof StorageUnavailableError, 'the guilty one gets 503');
    assert.ok(
      others.every((s) => 'outcome' in s && s.outcome.kind === 'accepted'),
      'every other delivery commits',
    );
    assert.equal((await rowIds('evt_unknown_class_')).size, 50);
    assert.ok((await poisonAttempts()) > 1, 'it was found by splitting its batch');
  });

  test('a delivery that fails only at COMMIT (a deferred constraint) is found the same way, and a conflicting duplicate in the failed batch is recorded once', async () => {
    const ingestor = await newIngestor({ maxBatchSize: 64, maxConcurrentBatches: 1 });
    const storedId = 'evt_commit_conflict_stored';
    assert.equal((await ingestor.ingest(incoming(storedId))).kind, 'accepted');
    await poisonAttempts();
    const contradiction = incoming(storedId);
    contradiction.event = { ...contradiction.event, eventType: 'charge.refunded' };
    contradiction.fingerprint = `${storedId}:refunded`;
    const ids = Array.from({ length: 50 }, (_, i) => `evt_commit_valid_${i}`);
    const deliveries = ids.map((id) => incoming(id));
    deliveries.splice(25, 0, incoming('evt_commitpoison_1'), contradiction);
    const settled = await Promise.all(
      deliveries.map((d) =>
        ingestor.ingest(d).then(
          (outcome) => ({ d, outcome }),
          (error: unknown) => ({ d, error }),
        ),
      ),
    );

    assert.ok((await poisonAttempts()) > 1, 'the batch failed at COMMIT and was split to find the delivery');
    const poisoned = settled.find((s) => s.d.event.eventId === 'evt_commitpoison_1')!;
    assert.ok('error' in poisoned && poisoned.error instanceof EventUnstorableError, 'the guilty delivery is refused as a data error, not a 503');
    const recorded = await database.sql`select c.id from webhook_inbox_conflicts c join webhook_inbox i on i.id = c.inbox_id where i.event_id = ${storedId}`;
    assert.equal(recorded.length, 1, 'recorded once, by the half that committed');
    for (const id of ids) {
      const s = settled.find((x) => x.d.event.eventId === id)!;
      assert.ok('outcome' in s && s.outcome.kind === 'accepted', `${id} committed`);
    }
    assert.equal((await rowIds('evt_commit_valid_')).size, 50);
    assert.equal((await rowIds('evt_commitpoison_')).size, 0, 'no row for the guilty delivery');
  });
});
