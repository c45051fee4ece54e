import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let archiveDir: string;
let env: Record<string, string>;

setup(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inboxctl-damaged-'));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_damaged', INBOX_ARCHIVE_DIR: archiveDir };
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const eventIds = async () => (await database.sql`select event_id from webhook_inbox order by event_id`).map((r) => r.event_id as string);

describe('inboxctl restore of an archive torn by a crash', () => {
  test('restores the rows before the tear (they are in no other place), then exits 4 naming the tear', async () => {
    await insertInboxRows(database.sql, [
      { eventId: 'evt_t1', status: 'processed', receivedAt: new Date('2024-03-01T10:00:00Z') },
      { eventId: 'evt_t2', status: 'ignored', receivedAt: new Date('2024-03-01T11:00:00Z') },
    ]);
    const purge = await runInboxctl(['purge', '--older-than', '30d'], env);
    assert.equal(purge.code, 0, purge.stderr);
    const file = path.join(archiveDir, 'stripe', 'stripe-2024-03-01.jsonl.gz');
    // The next run crashed mid-append: its rows stayed in the database, a torn member in the file.
    await appendFile(file, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01]));
    await insertInboxRows(database.sql, [{ eventId: 'evt_t3', status: 'processed', receivedAt: new Date('2024-03-01T12:00:00Z') }]);
    const again = await runInboxctl(['purge', '--older-than', '30d'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /was damaged; kept as /);
    const damaged = (await readdir(path.dirname(file))).find((name) => name.includes('.damaged-'));
    assert.ok(damaged, 'the torn file was set aside');
    assert.deepEqual(await eventIds(), [], 'evt_t1 and evt_t2 are now only in the damaged file');

    // README: the damaged file is "readable up to the tear"; "Read them back with inboxctl restore FILE".
    const restore = await runInboxctl(['restore', path.join(path.dirname(file), damaged)], env);
    assert.equal(restore.code, 4, restore.stderr);
    assert.match(restore.stderr, /cannot decompress/);
    assert.deepEqual(await eventIds(), ['evt_t1', 'evt_t2'], 'the rows before the tear are back');
    // Found by a probe: the message asked "Is this an inbox archive?" of a file the service itself set aside.
    assert.doesNotMatch(restore.stderr, /Is this an inbox archive/);
    assert.match(restore.stderr, /The inbox set this file aside as torn by a crash/);
    assert.match(restore.stderr, /2 events before the tear were read: 2 inserted, 0 already in the inbox/);
    const dryRun = await runInboxctl(['restore', path.join(path.dirname(file), damaged), '--dry-run'], env);
    assert.equal(dryRun.code, 4, dryRun.stderr);
    assert.match(dryRun.stderr, /2 events before the tear were read: 0 would be inserted, 2 already in the inbox/);
  });
});
