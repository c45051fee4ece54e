import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

// Found by running purge and restore with --json into a failure part-way (exit 4): stdout was
// empty, so a script learnt neither which providers were purged and into which files, nor how
// many rows of a torn archive were restored before the tear, though all of it was committed.

const database = useTestDatabase();
let archiveDir: string;
let env: Record<string, string>;

setup(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inboxctl-partial-'));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_partial', INBOX_ARCHIVE_DIR: archiveDir };
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const eventIds = async () => (await database.sql`select event_id from webhook_inbox order by event_id`).map((r) => r.event_id as string);

describe('inboxctl purge stopped part-way', () => {
  const fileOf = (provider: string, day: string) => path.join(archiveDir, provider, `${provider}-${day}.jsonl.gz`);

  // acme is purged whole, then stripe's second batch fails (a trigger stands in for a disk or
  // database error): acme's row and stripe's first are archived and deleted, committed.
  setup(async () => {
    await insertInboxRows(database.sql, [
      { provider: 'acme', eventId: 'evt_a1', status: 'processed', receivedAt: new Date('2024-03-01T10:00:00Z') },
      { eventId: 'evt_s1', status: 'processed', receivedAt: new Date('2024-03-01T10:00:00Z') },
      { eventId: 'evt_s2_stop', status: 'processed', receivedAt: new Date('2024-03-02T10:00:00Z') },
      { eventId: 'evt_s3', status: 'processed', receivedAt: new Date('2024-03-03T10:00:00Z') },
    ]);
    await database.sql.unsafe(`
      create function refuse_a_delete() returns trigger language plpgsql as $$
      begin
        if old.event_id = 'evt_s2_stop' then raise exception 'no space left on device (simulated)'; end if;
        return old;
      end $$;
      create trigger refuse_a_delete before delete on webhook_inbox for each row execute function refuse_a_delete();`);
  });

  // acme is not configured here: its dedupe window is unknown, so --force.
  const purge = ['purge', '--older-than', '90d', '--batch-size', '1', '--force'];

  test('--json: exit 4, the error and what was archived and deleted before it', async () => {
    const run = await runInboxctl([...purge, '--json'], env);
    assert.equal(run.code, 4, run.stderr);
    const { error, partial } = run.json();
    assert.equal(error.code, 'operation_incomplete');
    assert.equal(error.exitCode, 4);
    assert.match(error.message, /^The purge of stripe stopped part-way \(1 rows archived and deleted\): .*no space left on device \(simulated\)/);
    assert.deepEqual(
      partial.map((p: { provider: string; deleted: number; files: unknown[]; dryRun: boolean }) => ({ provider: p.provider, deleted: p.deleted, files: p.files, dryRun: p.dryRun })),
      [
        { provider: 'acme', deleted: 1, files: [{ file: fileOf('acme', '2024-03-01'), rows: 1 }], dryRun: false },
        { provider: 'stripe', deleted: 1, files: [{ file: fileOf('stripe', '2024-03-01'), rows: 1 }], dryRun: false },
      ],
    );
    assert.deepEqual(await eventIds(), ['evt_s2_stop', 'evt_s3']);
  });

  test('without --json: the same, as the lines a finished purge prints, then the error', async () => {
    await insertInboxRows(database.sql, [{ provider: 'acme', eventId: 'evt_a2', status: 'processed', receivedAt: new Date('2024-03-02T10:00:00Z') }]);
    const run = await runInboxctl(purge, env);
    assert.equal(run.code, 4, run.stderr);
    // acme's new row goes; stripe stops at the same row again.
    assert.match(run.out, /^acme: 1 row received before .* archived and deleted\.\n  .*acme-2024-03-02\.jsonl\.gz  1 row$/m);
    assert.match(run.out, /^stripe: 0 rows received before .* archived and deleted\.$/m);
    assert.match(run.stderr, /^inboxctl: The purge of stripe stopped part-way/m);
  });
});

describe('inboxctl restore of a torn archive', () => {
  test('--json: exit 4, the error and what each file restored, the torn one up to its tear', async () => {
    await insertInboxRows(database.sql, [
      { provider: 'torn', eventId: 'evt_t1', status: 'processed', receivedAt: new Date('2024-05-01T10:00:00Z') },
      { provider: 'torn', eventId: 'evt_t2', status: 'ignored', receivedAt: new Date('2024-05-01T11:00:00Z') },
    ]);
    const first = await runInboxctl(['purge', '--older-than', '90d', '--provider', 'torn', '--force'], env);
    assert.equal(first.code, 0, first.stderr);
    const file = path.join(archiveDir, 'torn', 'torn-2024-05-01.jsonl.gz');
    // A crash mid-append; the next purge sets the file aside and starts a fresh one with evt_t3.
    await appendFile(file, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01]));
    await insertInboxRows(database.sql, [{ provider: 'torn', eventId: 'evt_t3', status: 'processed', receivedAt: new Date('2024-05-01T12:00:00Z') }]);
    const again = await runInboxctl(['purge', '--older-than', '90d', '--provider', 'torn', '--force'], env);
    assert.equal(again.code, 0, again.stderr);
    const damaged = path.join(path.dirname(file), (await readdir(path.dirname(file))).find((name) => name.includes('.damaged-'))!);

    const run = await runInboxctl(['restore', file, damaged, '--json'], env);
    assert.equal(run.code, 4, run.stderr);
    const { error, partial } = run.json();
    assert.equal(error.code, 'archive_unreadable');
    assert.equal(error.exitCode, 4);
    assert.match(error.message, /cannot decompress/);
    assert.deepEqual(partial, [
      { file, dryRun: false, read: 1, inserted: 1, skipped: 0 },
      { file: damaged, dryRun: false, read: 2, inserted: 2, skipped: 0 },
    ]);
    assert.deepEqual((await eventIds()).filter((id) => id.startsWith('evt_t')), ['evt_t1', 'evt_t2', 'evt_t3']);

    const text = await runInboxctl(['restore', damaged], env);
    assert.equal(text.code, 4, text.stderr);
    assert.equal(text.out, `${damaged}: 2 events read, 0 inserted, 2 already in the inbox (left as they are).\n`);
    assert.match(text.stderr, /cannot decompress/);
  });
});
