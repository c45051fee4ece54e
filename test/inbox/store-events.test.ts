import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { type DatabaseHandle, postgresExecutor } from '../../src/db/client.ts';
import { toEventRow } from '../../src/inbox/event-row.ts';
import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { findEventsByIds } from '../../src/inbox/sql/find-events.ts';
import { storeNewEvents } from '../../src/inbox/sql/store-events.ts';
import { createLogger } from '../../src/logger.ts';
import { startBoss } from '../../src/queue/boss.ts';
import { type EmbeddedJobInsert, webhookJobInsert } from '../../src/queue/embedded-job-insert.ts';
import { JobNotCreatedError, enqueueWebhookJobs } from '../../src/queue/enqueue.ts';
import { WEBHOOKS_QUEUE, singletonKeyFor } from '../../src/queue/queues.ts';
import { testWorkerConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';

const database = useTestDatabase();
let handle: DatabaseHandle;
let boss: PgBoss;
let jobs: EmbeddedJobInsert;
let jobTable: string;

setup(async () => {
  handle = database.connect('store-events-test');
  boss = await startBoss({
    url: database.url,
    role: 'receiver',
    worker: testWorkerConfig,
    poolSize: 2,
    connectTimeoutSeconds: 5,
    logger: createLogger('silent'),
  });
  database.onTeardown(() => boss.stop({ graceful: false, close: true }));
  jobs = await webhookJobInsert(boss);
  jobTable = `pgboss.${(await boss.getQueue(WEBHOOKS_QUEUE))!.table}`;
});

const store = (events: IncomingEvent[]) => storeNewEvents(postgresExecutor(handle.sql), jobs, events.map(toEventRow));

/** Every byte value, NUL and invalid UTF-8 included: raw_body must come back exactly. */
const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

function incoming(eventId: string, rawBody: Buffer = Buffer.from(`{"id":"${eventId}"}`)): IncomingEvent {
  return {
    provider: 'stripe',
    event: {
      eventId,
      eventType: 'charge.succeeded',
      resourceId: eventId.endsWith('0') ? null : `ch_${eventId}`,
      occurredAt: new Date('2026-01-02T03:04:05.678Z'),
      payload: { id: eventId, amount: 2000, nested: { text: 'ação "quoted" \\ ✓', big: '12345678901234567890' } },
    },
    rawBody,
    fingerprint: `fingerprint of ${eventId}`,
    proof: { scheme: 'none', verifiedAt: '2026-01-02T03:04:06.000Z' },
  };
}

interface JobRow {
  data: { inboxId: number; receivedAtMs: number };
  singleton_key: string;
  state: string;
}
const jobsOf = async (eventIdPattern: string) =>
  database.sql.unsafe<JobRow[]>(
    `select j.data, j.singleton_key, j.state from ${jobTable} j join webhook_inbox i on i.id = (j.data->>'inboxId')::bigint
     where j.name = $1 and i.event_id like $2`,
    [WEBHOOKS_QUEUE, eventIdPattern],
  );

describe('storeNewEvents', () => {
  test('stores every batch size exactly (raw bytes, payload, columns), each new event with its one job, and returns one row per new event', async () => {
    for (const size of [1, 2, 3, 5, 8, 13, 64, 100]) {
      const events = Array.from({ length: size }, (_, i) => incoming(`evt_size_${size}_${i}`, i === 0 ? everyByte : undefined));
      const inserted = await store(events);
      assert.equal(inserted.length, size, `batch of ${size}: every event is new`);
      const rows = await database.sql<
        {
          id: string;
          event_id: string;
          event_type: string;
          resource_id: string | null;
          payload: unknown;
          raw_body: Buffer;
          occurred_at: Date;
          received_ms: number;
        }[]
      >`
        select id, event_id, event_type, resource_id, payload, raw_body, occurred_at, floor(extract(epoch from received_at) * 1000)::float8 as received_ms from webhook_inbox where event_id like ${`evt_size_${size}_%`}`;
      assert.equal(rows.length, size);
      const byEventId = new Map(rows.map((r) => [r.event_id, r]));
      const jobByInboxId = new Map((await jobsOf(`evt_size_${size}_%`)).map((job) => [job.data.inboxId, job]));
      assert.equal(jobByInboxId.size, size, `batch of ${size}: one job per stored event`);
      for (const [i, event] of events.entries()) {
        const row = byEventId.get(event.event.eventId)!;
        const returned = inserted.find((r) => r.eventId === event.event.eventId);
        assert.deepEqual(returned, {
          id: Number(row.id),
          provider: 'stripe',
          eventId: event.event.eventId,
          resourceId: event.event.resourceId,
          receivedAt: new Date(row.received_ms),
        });
        assert.ok(Buffer.from(row.raw_body).equals(event.rawBody), `raw body of #${i} byte for byte`);
        assert.deepEqual(row.payload, event.event.payload);
        assert.equal(row.resource_id, event.event.resourceId);
        assert.equal(row.occurred_at.toISOString(), '2026-01-02T03:04:05.678Z');
        const job = jobByInboxId.get(Number(row.id))!;
        assert.deepEqual(job.data, { inboxId: Number(row.id), receivedAtMs: row.received_ms });
        assert.equal(job.singleton_key, singletonKeyFor(returned!));
        assert.equal(job.state, 'created');
      }
    }
  });

  test('one prepared statement per power of two serves every batch size up to it, on a connection (not one per size)', async () => {
    const single = database.connect('store-events-one-connection', 1);
    const storeOn = (events: IncomingEvent[]) => storeNewEvents(postgresExecutor(single.sql), jobs, events.map(toEventRow));
    // 33 to 64 events: one statement text (64 rows), padded with 31 to 0 unused rows.
    for (let size = 33; size <= 64; size += 1) {
      assert.equal((await storeOn(Array.from({ length: size }, (_, i) => incoming(`evt_prepared_${size}_${i}`)))).length, size);
    }
    const statements = await single.sql<{ generic_plans: number; custom_plans: number }[]>`
      select generic_plans::int, custom_plans::int from pg_prepared_statements where statement like 'with batch as%'`;
    assert.equal(statements.length, 1, 'every batch size ran on the same prepared statement');
    // PostgreSQL plans the first five executions one by one, then settles on a generic plan.
    assert.ok(statements[0]!.generic_plans > 0, `settled on a generic plan: ${JSON.stringify(statements[0])}`);
  });

  test('events already stored are absent from the answer, keep their first row and get no second job', async () => {
    const first = await store([incoming('evt_again_1'), incoming('evt_again_2')]);
    const second = await store([incoming('evt_again_1', Buffer.from('changed')), incoming('evt_again_3'), incoming('evt_again_2')]);
    assert.deepEqual(
      second.map((r) => r.eventId),
      ['evt_again_3'],
    );
    const [row] = await database.sql<{ id: string; raw_body: Buffer }[]>`select id, raw_body from webhook_inbox where event_id = 'evt_again_1'`;
    assert.equal(Number(row!.id), first.find((r) => r.eventId === 'evt_again_1')!.id);
    assert.equal(Buffer.from(row!.raw_body).toString(), '{"id":"evt_again_1"}');
    assert.equal((await jobsOf('evt_again_%')).length, 3);
    assert.deepEqual(await store([incoming('evt_again_3')]), [], 'a batch of duplicates only stores nothing');
    assert.equal((await jobsOf('evt_again_%')).length, 3);
  });

  test("the job is the row pg-boss's own insert writes for the same event (sweeper and replays queue through boss.insert)", async () => {
    const [stored] = await store([incoming('evt_same_job_1')]);
    await handle.sql.begin((tx) => enqueueWebhookJobs(boss, postgresExecutor(tx), [stored!]));
    // Everything pg-boss derives from the queue and the job; ids and clocks aside.
    const rows = await database.sql.unsafe(
      `select data, priority, singleton_key, singleton_on, group_id, group_tier, expire_seconds, deletion_seconds, keep_until - start_after as kept_for,
         retry_limit, retry_delay, retry_backoff, retry_delay_max, policy, dead_letter, heartbeat_seconds, blocked, blocking, pending_dependencies, state,
         start_after - created_on as delayed_by
       from ${jobTable} where name = $1 and (data->>'inboxId')::bigint = $2 order by created_on`,
      [WEBHOOKS_QUEUE, stored!.id],
    );
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0], rows[1]);
    assert.equal(rows[0]!.deletion_seconds, 24 * 3600, 'a finished job is kept a day: the monitor counts the whole job table every pass (queues.ts)');
  });

  test('notifies the queue once per batch, as boss.insert does, so listening workers wake', async () => {
    const listener = database.connect('store-events-listen', 1);
    const heard: string[] = [];
    const channel = (await database.sql<{ channel: string }[]>`select 'pgboss_' || left(encode(sha224('pgboss'::bytea), 'hex'), 24) as channel`)[0]!.channel;
    const subscription = await listener.sql.listen(channel, (payload) => heard.push(payload));
    await store([incoming('evt_notify_1'), incoming('evt_notify_2')]);
    await store([incoming('evt_notify_1')]);
    for (let i = 0; i < 50 && heard.length < 1; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await subscription.unlisten();
    assert.deepEqual(heard, [WEBHOOKS_QUEUE], 'one NOTIFY for the batch that stored events, none for the batch of duplicates');
  });

  test('if pg-boss refuses a job, nothing of the batch is stored: no row without its job', async () => {
    // A job insert that silently stores nothing for one key, as a refusing policy would.
    await database.sql.unsafe(`
      create function refuse_job() returns trigger language plpgsql as $$
      begin
        if new.singleton_key = 'stripe:ch_evt_refused_2' then return null; end if;
        return new;
      end $$;
      create trigger refuse_job before insert on ${jobTable} for each row execute function refuse_job();`);
    try {
      await assert.rejects(store([incoming('evt_refused_1'), incoming('evt_refused_2')]), JobNotCreatedError);
      const [counts] = await database.sql<{ rows: number; keys: number }[]>`
        select (select count(*)::int from webhook_inbox where event_id like 'evt_refused_%') as rows,
               (select count(*)::int from webhook_event_keys where event_id like 'evt_refused_%') as keys`;
      assert.deepEqual(counts, { rows: 0, keys: 0 });
    } finally {
      await database.sql.unsafe(`drop trigger refuse_job on ${jobTable}`);
    }
    assert.equal((await store([incoming('evt_refused_1'), incoming('evt_refused_2')])).length, 2, 'stored once pg-boss takes the jobs again');
  });

  test("payloads whose keys were written with an escape come back as stored through the application's pool, one after another in this process (nodejs/node#63785)", async () => {
    // In the trigger pair's order: once the first has been read, Node 24's JSON.parse reads the second
    // one's key as a backslash, and processing's handlers would see a key the gateway never sent.
    // jsonb writes keys shortest first, then by their bytes, and V8 misreads an escaped key that
    // comes last: ' ' (0x20) sorts before both.
    const payloads = [
      { ' ': 1, '\\': 0 },
      { ' ': 1, '"': 0 },
    ];
    const stored = await store(
      payloads.map((payload, i) => ({ ...incoming(`evt_escaped_key_${i}`), event: { ...incoming(`evt_escaped_key_${i}`).event, payload } })),
    );
    for (const [i, payload] of payloads.entries()) {
      const row = stored.find((r) => r.eventId === `evt_escaped_key_${i}`)!;
      const read = (await findEventsByIds(postgresExecutor(handle.sql), [row])).get(row.id);
      assert.deepStrictEqual(read?.payload, payload, `payload #${i}`);
    }
  });
});
