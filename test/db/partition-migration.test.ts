import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PgBoss } from 'pg-boss';
import { monthPartition } from '../../src/db/inbox-partitions.ts';
import { WEBHOOKS_QUEUE, ensureQueues } from '../../src/queue/queues.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { migrateUpTo } from '../support/migrations.ts';
import { startTestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_partition_migration';
const PARTITIONING = '0012_partitioned_inbox';
const database = useTestDatabase();

/** The database as an install from before partitioning has it: every migration up to the one that partitions, applied as the runner does. */
const migrateUpToPartitioning = () => migrateUpTo(database, PARTITIONING);

const MONTHS = ['2025-11-20T10:00:00Z', '2026-06-15T12:00:00Z', '2026-09-30T23:59:59.999Z', '2026-10-01T00:00:00Z'];

/** Settled rows in several months, pending rows of this month with their jobs, a conflict: what an install holds. */
async function populate(): Promise<void> {
  await database.sql`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, processed_at)
    select 'stripe', 'evt_old_' || g, 'charge.succeeded', 'ch_old_' || g, '{}', '\\x7b7d', r, r, 'processed', r
    from generate_series(1, 400) g, lateral (select (${MONTHS}::timestamptz[])[1 + g % 4] as r) m`;
  const now = Math.floor(Date.now() / 1000);
  const pending = Array.from({ length: 20 }, (_, i) =>
    chargeEvent({ id: `evt_pending_${i}`, type: 'charge.succeeded', chargeId: `ch_pending_${i}`, created: now }),
  );
  const rows = await database.sql`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at)
    select 'stripe', b->>'id', b->>'type', b->'data'->'object'->>'id', b, convert_to(b::text, 'UTF8'), now()
    from jsonb_array_elements(${JSON.stringify(pending.map((p) => JSON.parse(p)))}::text::jsonb) b
    returning id::int as id, provider, event_id as "eventId", resource_id as "resourceId"`;
  await database.sql`insert into webhook_event_keys (provider, event_id, fingerprint, received_at) select provider, event_id, fingerprint, received_at from webhook_inbox on conflict do nothing`;
  await database.sql`
    insert into webhook_inbox_conflicts (inbox_id, provider, event_id, fingerprint, differences, raw_body)
    select id, provider, event_id, 'other', '[]', '\\x7b7d' from webhook_inbox where event_id = 'evt_old_1'`;
  const boss = new PgBoss({ connectionString: database.url, max: 2, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    await ensureQueues(boss, testConfig({}).worker);
    // The jobs as a version from before partitioning queued them: the row's id only, no receivedAtMs.
    const jobs = rows.map((r) => ({ data: { inboxId: r.id }, singletonKey: `${r.provider}:${r.resourceId}` }));
    assert.equal((await boss.insert(WEBHOOKS_QUEUE, jobs, { returnId: true }))?.length, rows.length);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

const snapshot = async () => ({
  rows: await database.sql`select id::int, provider, event_id, status, received_at::text, md5(raw_body) as body from webhook_inbox order by id`,
  jobs: await database.sql`select (data->>'inboxId')::int as inbox_id from pgboss.job where name = ${WEBHOOKS_QUEUE} order by 1`,
});

describe('the migration to a partitioned inbox, on a populated database (issue 15)', () => {
  test('same rows, same ids, jobs still processed; partitions for the months present and ahead, a default; the ids go on', async () => {
    await migrateUpToPartitioning();
    await populate();
    const before = await snapshot();
    assert.equal(before.rows.length, 420);
    assert.equal(before.jobs.length, 20);

    // The service applies the remaining migrations at start, then its workers take the queued jobs.
    const service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET } });
    const [table] = await database.sql<
      { partitioned: boolean }[]
    >`select exists (select 1 from pg_partitioned_table where partrelid = 'webhook_inbox'::regclass) as partitioned`;
    assert.equal(table!.partitioned, true);
    const after = await snapshot();
    assert.deepEqual(
      after.rows.map((r) => ({ ...r, status: undefined })),
      before.rows.map((r) => ({ ...r, status: undefined })),
      'every row, with its id, time and bytes',
    );
    assert.deepEqual(after.jobs, before.jobs, 'every job, still naming its row');

    await waitFor(
      async () => {
        const [row] = await database.sql`select count(*)::int as n from webhook_inbox where event_id like 'evt_pending_%' and status = 'processed'`;
        return row!.n === 20;
      },
      { message: 'the 20 pending rows processed after the migration', timeoutMs: 60_000 },
    );

    const partitions = (
      await database.sql`select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'webhook_inbox'::regclass order by 1`
    ).map((r) => r.relname);
    const expected = [
      ...MONTHS.map((m) => monthPartition(new Date(m)).name),
      ...[0, 1, 2, 3].map((ahead) => monthPartition(new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + ahead, 1))).name),
      'webhook_inbox_default',
    ];
    assert.deepEqual(partitions, [...new Set(expected)].sort());
    const placed =
      await database.sql`select tableoid::regclass::text as partition, count(*)::int as n from webhook_inbox where event_id like 'evt_old_%' group by 1 order by 1`;
    assert.deepEqual(
      placed.map((p) => p.partition),
      [...new Set(MONTHS.map((m) => monthPartition(new Date(m)).name))].sort(),
      'each row in its month',
    );

    const [conflict] =
      await database.sql`select c.inbox_id::int, c.inbox_received_at = i.received_at as same from webhook_inbox_conflicts c join webhook_inbox i on i.id = c.inbox_id`;
    assert.equal(conflict!.same, true, 'the conflict points at its event by (id, received_at)');

    const body = chargeEvent({ id: 'evt_after_migration', type: 'charge.succeeded', chargeId: 'ch_after_migration', created: Math.floor(Date.now() / 1000) });
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    const [fresh] = await database.sql`select count(*)::int as n, min(id)::int as id from webhook_inbox where event_id = 'evt_after_migration'`;
    assert.equal(fresh!.n, 1, 'deduplicated after the migration too');
    assert.ok(fresh!.id > Math.max(...before.rows.map((r) => r.id)), 'the id sequence goes on past the migrated ids');
    await service.stop();
  });
});
