import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { type ConflictRecorder, createConflictRecorder } from '../../src/inbox/conflicting-duplicates.ts';
import { eventFingerprint } from '../../src/inbox/event-fingerprint.ts';
import { type IngestOutcome, createGroupCommitIngestor } from '../../src/inbox/group-commit.ts';
import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { createLogger } from '../../src/logger.ts';
import { builtInDrivers } from '../../src/gateways/registry.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { webhookJobInsert } from '../../src/queue/embedded-job-insert.ts';
import { testWorkerConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_conflicts_across_batches';
const HELD_LOCK = 4242;
const stripe = builtInDrivers.stripe!.create({ name: 'stripe', secrets: [SECRET], signatureToleranceSeconds: 300, options: {} });
const database = useTestDatabase();
let pool: DatabaseHandle;
let boss: PgBoss;

setup(async () => {
  // Holds a chosen event's transaction open after its INSERT, for as long as the test holds a lock.
  await database.sql.unsafe(`
    create function hold_event() returns trigger language plpgsql as $$
    begin
      if new.event_id like 'evt_held%' then perform pg_advisory_xact_lock(${HELD_LOCK}); end if;
      return new;
    end $$;
    create trigger hold_event after insert on webhook_inbox for each row execute function hold_event();`);
  pool = database.connect('conflicts-test', 3);
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

function body(eventId: string, type: string, amountRefunded?: number): string {
  return chargeEvent({ id: eventId, type, chargeId: `ch_${eventId}`, created: 1_767_225_600, amountRefunded });
}

/** A delivery as the route hands it to the ingestor: parsed and fingerprinted by the real driver. */
function incoming(rawText: string): IncomingEvent {
  const rawBody = Buffer.from(rawText);
  const event = stripe.parse({ rawBody, header: () => undefined, query: new URLSearchParams() }, new Date());
  return {
    provider: 'stripe',
    event,
    rawBody,
    fingerprint: eventFingerprint({ provider: 'stripe', ...event }, stripe),
    proof: { scheme: 'none', verifiedAt: new Date().toISOString() },
  };
}

async function conflictBodies(eventId: string): Promise<string[]> {
  const rows = await database.sql`select raw_body from webhook_inbox_conflicts where event_id = ${eventId} order by id`;
  return rows.map((row) => Buffer.from(row.raw_body).toString('utf8'));
}

async function storedId(eventId: string): Promise<number> {
  const [row] = await database.sql`select id::int as id from webhook_inbox where event_id = ${eventId}`;
  return row!.id;
}

describe('conflicts inside one group-commit batch', () => {
  const recorder = createConflictRecorder({ driverOf: () => stripe });

  test('two bodies with one id in the same batch: the first is stored, the second is on record as its conflict', async () => {
    const ingestor = createGroupCommitIngestor({
      sql: pool.sql,
      jobs: await webhookJobInsert(boss),
      conflicts: recorder,
      maxBatchSize: 100,
      maxConcurrentBatches: 1,
      commitDeadlineMs: 30_000,
    });
    // While the first batch is in flight, everything ingested in one tick waits for the next one, together.
    const plug = ingestor.ingest(incoming(body('evt_batch_plug', 'charge.succeeded')));
    const a = body('evt_batch_1', 'charge.succeeded');
    const b = body('evt_batch_1', 'charge.failed');
    const outcomes = await Promise.all([ingestor.ingest(incoming(a)), ingestor.ingest(incoming(b)), ingestor.ingest(incoming(a))]);
    await plug;
    const id = await storedId('evt_batch_1');
    assert.deepEqual(outcomes, [{ kind: 'accepted', inboxId: id }, { kind: 'conflicting_duplicate', inboxId: id }, { kind: 'duplicate' }]);
    assert.deepEqual(await conflictBodies('evt_batch_1'), [b]);
  });

  test('a batch without duplicates never asks for a comparison; one with duplicates asks once, for those only', async () => {
    const calls: string[][] = [];
    const spy: ConflictRecorder = {
      recordConflictingDuplicates(tx, duplicates) {
        calls.push(duplicates.map((d) => d.event.eventId));
        return recorder.recordConflictingDuplicates(tx, duplicates);
      },
    };
    const ingestor = createGroupCommitIngestor({
      sql: pool.sql,
      jobs: await webhookJobInsert(boss),
      conflicts: spy,
      maxBatchSize: 100,
      maxConcurrentBatches: 1,
      commitDeadlineMs: 30_000,
    });
    const plug = ingestor.ingest(incoming(body('evt_spy_plug', 'charge.succeeded')));
    const fresh = ['evt_spy_1', 'evt_spy_2', 'evt_spy_3'].map((id) => ingestor.ingest(incoming(body(id, 'charge.succeeded'))));
    await Promise.all([plug, ...fresh]);
    assert.deepEqual(calls, [], 'two batches of new events: no comparison at all');

    const again = await Promise.all([
      ingestor.ingest(incoming(body('evt_spy_4', 'charge.succeeded'))),
      ingestor.ingest(incoming(body('evt_spy_2', 'charge.succeeded'))),
    ]);
    assert.deepEqual(
      again.map((o: IngestOutcome) => o.kind),
      ['accepted', 'duplicate'],
    );
    assert.deepEqual(calls, [['evt_spy_2']]);
  });
});

describe('conflicts across concurrent transactions (READ COMMITTED)', () => {
  // Two service instances on one database: their batches commit independently.
  const first = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET } });
  const second = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET } });

  const waiting = (waitEvent: string) =>
    waitFor(
      async () => {
        const [row] =
          await database.sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and wait_event = ${waitEvent}`;
        return row!.n > 0;
      },
      { message: `a backend waiting on ${waitEvent}` },
    );

  test("a copy whose INSERT waited on the other instance's uncommitted row is compared with it once that commits", async () => {
    const a = body('evt_held_1', 'charge.succeeded');
    const b = body('evt_held_1', 'charge.refunded', 2000);
    const lock = await database.sql.reserve();
    try {
      await lock`select pg_advisory_lock(${HELD_LOCK})`;
      const answerA = postStripe(first.baseUrl, a, SECRET);
      await waiting('advisory'); // A's row is inserted, its transaction open
      const answerB = postStripe(second.baseUrl, b, SECRET);
      await waiting('transactionid'); // B's INSERT … ON CONFLICT waits for A's transaction to end
      await lock`select pg_advisory_unlock(${HELD_LOCK})`;
      assert.deepEqual([(await answerA).status, (await answerB).status], [200, 200]);
    } finally {
      lock.release();
    }
    const [stored] = await database.sql`select raw_body from webhook_inbox where event_id = 'evt_held_1'`;
    assert.equal(Buffer.from(stored!.raw_body).toString('utf8'), a);
    assert.deepEqual(await conflictBodies('evt_held_1'), [b]);
  });
});
