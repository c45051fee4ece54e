import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { postgresExecutor } from '../../src/db/client.ts';
import { createMonthPartitionsAhead } from '../../src/db/inbox-partitions.ts';
import { type ArchiveWriter, createArchiveWriter, readArchive } from '../../src/operations/archive.ts';
import { PartialResultError } from '../../src/operations/errors.ts';
import { applyRetention } from '../../src/operations/retention.ts';
import { insertInboxRows, useOperationsHarness } from './harness.ts';

const h = useOperationsHarness();
let archiveDir: string;

before(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inbox-partition-retention-'));
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const partitions = async () =>
  (
    await h.database.sql`select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'webhook_inbox'::regclass order by 1`
  ).map((r) => r.relname as string);

describe('retention by partition (issue 15)', () => {
  test('a settled month past retention is archived, detached and dropped; a month holding a pending or failed row stays', async () => {
    await h.database.sql.begin((tx) => createMonthPartitionsAhead(postgresExecutor(tx), new Date('2025-01-10T00:00:00Z'), 1));
    const january = await insertInboxRows(h.database.sql, [
      { eventId: 'evt_jan_1', status: 'processed', receivedAt: new Date('2025-01-02T10:00:00Z') },
      { eventId: 'evt_jan_2', status: 'ignored', receivedAt: new Date('2025-01-31T23:59:59Z') },
      { eventId: 'evt_jan_3', provider: 'asaas', status: 'processed', receivedAt: new Date('2025-01-15T00:00:00Z') },
    ]);
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_feb_done', status: 'processed', receivedAt: new Date('2025-02-03T10:00:00Z') },
      { eventId: 'evt_feb_pending', status: 'pending', receivedAt: new Date('2025-02-04T10:00:00Z') },
      { eventId: 'evt_feb_failed', status: 'failed', receivedAt: new Date('2025-02-05T10:00:00Z') },
    ]);
    await h.database.sql`insert into webhook_event_keys (provider, event_id, received_at) select provider, event_id, received_at from webhook_inbox`;
    await h.database.sql`insert into webhook_inbox_conflicts (inbox_id, inbox_received_at, provider, event_id, fingerprint, differences, raw_body)
      select id, received_at, provider, event_id, 'other', '[]', '\\x7b7d' from webhook_inbox where id = ${january[0]!}`;

    const providers = new Map([
      ['stripe', { name: 'stripe', retentionDays: 30, keyRetentionDays: 400, resendWindowDays: 3, unknownPayment: 'create' as const }],
      ['asaas', { name: 'asaas', retentionDays: 60, keyRetentionDays: 400, resendWindowDays: 15, unknownPayment: 'create' as const }],
    ]);
    const { partitions: told, providers: results } = await applyRetention(
      { db: h.handle.db, archive: createArchiveWriter({ clock: () => new Date() }) },
      { providers, now: new Date('2025-06-01T00:00:00Z'), archiveDir },
    );

    assert.deepEqual(told, {
      dropped: [{ partition: 'webhook_inbox_p2025_01', rows: 3, byProvider: { stripe: 2, asaas: 1 } }],
      kept: [{ partition: 'webhook_inbox_p2025_02', blocking: 2 }],
    });
    assert.ok(!(await partitions()).includes('webhook_inbox_p2025_01'), 'January is gone: detached and dropped');
    assert.ok((await partitions()).includes('webhook_inbox_p2025_02'));
    const left = await h.database.sql`select event_id from webhook_inbox order by event_id`;
    assert.deepEqual(
      left.map((r) => r.event_id),
      ['evt_feb_failed', 'evt_feb_pending'],
      "February's settled row went row by row; its pending and failed rows stay",
    );
    assert.equal(results.find((r) => r.provider === 'stripe')!.deleted, 1);
    const [conflicts] = await h.database.sql<{ n: number }[]>`select count(*)::int as n from webhook_inbox_conflicts`;
    assert.equal(conflicts!.n, 0, "January's conflicts went with it");
    const [keys] = await h.database.sql<{ n: number }[]>`select count(*)::int as n from webhook_event_keys`;
    assert.equal(keys!.n, 6, 'every dedupe key stays (400 days)');

    const archived: string[] = [];
    for (const file of ['stripe/stripe-2025-01-02', 'stripe/stripe-2025-01-31', 'asaas/asaas-2025-01-15']) {
      for await (const line of readArchive(path.join(archiveDir, `${file}.jsonl.gz`))) archived.push(line.event_id);
    }
    assert.deepEqual(archived.sort(), ['evt_jan_1', 'evt_jan_2', 'evt_jan_3'], 'every January row is in the usual archive files');
  });

  test('a run stopped by a month it cannot archive says which months went before it', async () => {
    await h.database.sql.begin((tx) => createMonthPartitionsAhead(postgresExecutor(tx), new Date('2023-01-10T00:00:00Z'), 1));
    await insertInboxRows(h.database.sql, [
      { eventId: 'evt_2023_jan', status: 'processed', receivedAt: new Date('2023-01-05T10:00:00Z') },
      { eventId: 'evt_2023_feb', status: 'processed', receivedAt: new Date('2023-02-05T10:00:00Z') },
    ]);
    const archive = createArchiveWriter({ clock: () => new Date() });
    const diskFullInFebruary: ArchiveWriter = {
      append: async (file, events) => {
        if (file.endsWith('-2023-02-05.jsonl.gz')) throw new Error('no space left on device (simulated)');
        await archive.append(file, events);
      },
    };
    const providers = new Map([
      ['stripe', { name: 'stripe', retentionDays: 30, keyRetentionDays: 400, resendWindowDays: 3, unknownPayment: 'create' as const }],
    ]);
    const stopped: unknown = await applyRetention(
      { db: h.handle.db, archive: diskFullInFebruary },
      { providers, now: new Date('2025-06-01T00:00:00Z'), archiveDir },
    ).then(
      () => assert.fail('February cannot be archived: the run stops there'),
      (error: unknown) => error,
    );
    assert.ok(stopped instanceof PartialResultError, String(stopped));
    assert.match(stopped.message, /^The retention of whole months stopped part-way \(1 month archived and dropped\): .*no space left on device \(simulated\)/);
    assert.deepEqual(stopped.partial, {
      partitions: { dropped: [{ partition: 'webhook_inbox_p2023_01', rows: 1, byProvider: { stripe: 1 } }], kept: [] },
      providers: [],
    });
    const left = await h.database.sql`select event_id from webhook_inbox where event_id like 'evt_2023%'`;
    assert.deepEqual(
      left.map((r) => r.event_id),
      ['evt_2023_feb'],
      'January went, committed; February stays',
    );
  });
});
