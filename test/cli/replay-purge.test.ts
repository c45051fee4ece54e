import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { daysAgo, insertInboxRows, jobsFor, minutesAgo } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let archiveDir: string;
let env: Record<string, string>;

setup(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inboxctl-archive-'));
  // The service's own configuration: stripe keeps 30 days (the default retention).
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_purge', INBOX_ARCHIVE_DIR: archiveDir };
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const snapshot = () => database.sql`select id, event_id, status, last_error, raw_body, payload::text as payload from webhook_inbox order by id`;

describe('inboxctl replay', () => {
  test('--dry-run changes nothing; the replay itself queues the failed rows; a second replay finds nothing', async () => {
    const ids = await insertInboxRows(database.sql, [
      { eventId: 'evt_rp1', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(30) },
      { eventId: 'evt_rp2', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(20) },
      { eventId: 'evt_rp_ignored', status: 'ignored', receivedAt: minutesAgo(20) },
    ]);
    const before = await snapshot();
    const dry = await runInboxctl(['replay', 'stripe', '--status', 'failed', '--dry-run'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.out, /stripe: 2 events matched/);
    assert.match(dry.out, /Dry run: nothing changed/);
    assert.deepEqual(await snapshot(), before);
    assert.equal((await jobsFor(database.sql, ids)).length, 0);

    const replay = await runInboxctl(['replay', 'stripe', '--status', 'failed', '--json'], env);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.json().replayed, 2);
    const rows = await database.sql`select event_id, status, last_error from webhook_inbox where id = any(${ids}) order by id`;
    assert.deepEqual(
      rows.map((r) => [r.event_id, r.status, r.last_error]),
      [
        ['evt_rp1', 'pending', null],
        ['evt_rp2', 'pending', null],
        ['evt_rp_ignored', 'ignored', null],
      ],
    );
    assert.equal((await jobsFor(database.sql, ids)).length, 2);

    const again = await runInboxctl(['replay', 'stripe', '--json'], env);
    assert.equal(again.json().replayed, 0);
    assert.equal((await jobsFor(database.sql, ids)).length, 2, 'no second job');
  });

  test('--event-id picks single events', async () => {
    const ids = await insertInboxRows(database.sql, [
      { eventId: 'evt_one', status: 'ignored', receivedAt: minutesAgo(5) },
      { eventId: 'evt_other', status: 'ignored', receivedAt: minutesAgo(5) },
    ]);
    const run = await runInboxctl(['replay', 'stripe', '--status', 'ignored', '--event-id', 'evt_one', '--json'], env);
    assert.deepEqual(run.json().sampleEventIds, ['evt_one']);
    assert.deepEqual(
      (await jobsFor(database.sql, ids)).map((j) => j.inboxId),
      [ids[0]],
    );
  });

  // Found by a probe: `--event-id` of a processed event said only "0 events matched (status
  // failed)", so the operator took the id for wrong. Each named event no replay takes is named,
  // with its status and what would replay it; nothing matched is still exit 0 (a second replay of
  // the same event is harmless and finds it no longer failed).
  test('--event-id of an event that exists but is not replayed says its status and what would replay it', async () => {
    const ids = await insertInboxRows(database.sql, [
      { eventId: 'evt_done', status: 'processed', receivedAt: minutesAgo(5) },
      { eventId: 'evt_skipped', status: 'ignored', receivedAt: minutesAgo(5) },
    ]);
    const run = await runInboxctl(['replay', 'stripe', '--event-id', 'evt_done', '--event-id', 'evt_skipped', '--event-id', 'evt_typo'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(
      run.out,
      [
        'stripe: 0 events matched (status failed).',
        '  evt_done: exists, status processed; a replay takes failed or ignored events only.',
        '  evt_skipped: exists, status ignored; `--status ignored` replays it.',
        '  evt_typo: no stripe event has this id.',
        '',
      ].join('\n'),
    );
    const json = await runInboxctl(['replay', 'stripe', '--event-id', 'evt_done', '--event-id', 'evt_typo', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(json.json().notMatched, [
      { eventId: 'evt_done', status: 'processed' },
      { eventId: 'evt_typo', status: null },
    ]);
    assert.equal((await jobsFor(database.sql, ids)).length, 0, 'nothing replayed');
  });
});

describe('inboxctl sweep', () => {
  // Found by a probe: the README promised --dry-run for everything that changes data; sweep had none.
  test('--dry-run says which pending rows have no job and queues nothing', async () => {
    await database.sql`update webhook_inbox set status = 'processed' where status = 'pending'`;
    const [lost] = await insertInboxRows(database.sql, [{ eventId: 'evt_lost_dry', status: 'pending', receivedAt: minutesAgo(10) }]);
    const json = await runInboxctl(['sweep', '--dry-run', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const { oldestReceivedAt: _oldest, ...counts } = json.json<Record<string, unknown>>();
    assert.deepEqual(counts, { considered: 1, withoutJob: 1, requeued: 0, dryRun: true });
    const text = await runInboxctl(['sweep', '--dry-run'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.out, /^1 pending event past the age limit; 1 has no job and would be queued again\.$/m);
    assert.match(text.out, /^Dry run: nothing changed \(no job queued\)\.$/m);
    assert.equal((await jobsFor(database.sql, [lost!])).length, 0, 'no job queued');
  });

  test('re-queues a pending row whose job was lost', async () => {
    await database.sql`update webhook_inbox set status = 'processed' where status = 'pending'`;
    const [lost] = await insertInboxRows(database.sql, [{ eventId: 'evt_lost', status: 'pending', receivedAt: minutesAgo(10) }]);
    const run = await runInboxctl(['sweep', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.json().requeued, 1);
    assert.equal((await jobsFor(database.sql, [lost!])).length, 1);
  });
});

describe('inboxctl purge and restore', () => {
  test('refuses a cut-off inside the dedupe window (exit 2, nothing changed) unless --force', async () => {
    await insertInboxRows(database.sql, [{ eventId: 'evt_recent', status: 'processed', receivedAt: daysAgo(12) }]);
    const before = await snapshot();
    const run = await runInboxctl(['purge', '--older-than', '10d', '--provider', 'stripe'], env);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /inside stripe's 30-day dedupe window/);
    assert.deepEqual(await snapshot(), before);
    // Rows of a provider this configuration does not know, under no built-in gateway's name: its dedupe window is unknown.
    await insertInboxRows(database.sql, [{ provider: 'acme', eventId: 'evt_acme', status: 'processed', receivedAt: daysAgo(12) }]);
    const unconfigured = await runInboxctl(['purge', '--older-than', '400d', '--provider', 'acme'], {
      DATABASE_URL: database.url,
      WEBHOOK_SECRET_ASAAS: 'asaas_token',
    });
    assert.equal(unconfigured.code, 2);
    assert.match(unconfigured.stderr, /provider "acme" is not configured here, so its dedupe window is unknown/);
    await database.sql`delete from webhook_inbox where provider = 'acme'`;
    // A provider neither configured nor in the inbox is a typo.
    const unknown = await runInboxctl(['purge', '--older-than', '400d', '--provider', 'zoop'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no provider "zoop" is configured here \(stripe\) or has events in the inbox \(stripe\)/);
    assert.deepEqual(await snapshot(), before);
  });

  test("from a terminal without the service's secrets: purge --provider stripe takes the window a zero-config stripe has (INBOX_RETENTION_DAYS), and says so", async () => {
    await insertInboxRows(database.sql, [{ eventId: 'evt_no_secret', status: 'processed', receivedAt: daysAgo(12) }]);
    const before = await snapshot();
    const noSecrets = { DATABASE_URL: database.url, INBOX_ARCHIVE_DIR: archiveDir };
    const inside = await runInboxctl(['purge', '--older-than', '10d', '--provider', 'stripe'], noSecrets);
    assert.equal(inside.code, 2, inside.stderr);
    assert.match(inside.stderr, /inside stripe's 30-day dedupe window/);
    assert.deepEqual(await snapshot(), before);
    const dry = await runInboxctl(['purge', '--older-than', '400d', '--provider', 'stripe', '--dry-run'], noSecrets);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(
      dry.stderr,
      /stripe is not configured here \(no WEBHOOK_SECRET_STRIPE\): its dedupe window is taken as a zero-config stripe's, INBOX_RETENTION_DAYS \(30 days\)/,
    );
    assert.match(dry.out, /Dry run: nothing changed/);
    await database.sql`delete from webhook_inbox where event_id = 'evt_no_secret'`;
  });

  test('--dry-run lists files and counts and changes nothing; the purge archives, deletes, and restore brings the bytes back', async () => {
    const rawBody = Buffer.concat([Buffer.from('{"id":"evt_old_1",  "amount": 12345678901234567890, "note":"caf\u00e9"}'), Buffer.from('\n')]);
    await insertInboxRows(database.sql, [
      { eventId: 'evt_old_1', status: 'processed', receivedAt: new Date('2024-01-05T10:00:00Z'), processedAt: new Date('2024-01-05T10:00:01Z'), rawBody },
      { eventId: 'evt_old_2', status: 'ignored', receivedAt: new Date('2024-01-06T10:00:00Z') },
      { eventId: 'evt_old_failed', status: 'failed', lastError: 'x', receivedAt: new Date('2024-01-06T11:00:00Z') },
    ]);
    const before = await snapshot();

    const dry = await runInboxctl(['purge', '--older-than', '30d', '--dry-run', '--json'], env);
    assert.equal(dry.code, 0, dry.stderr);
    const [plan] = dry.json();
    assert.equal(plan.deleted, 2, 'processed and ignored; failed rows stay unless --include-failed');
    assert.deepEqual(
      plan.files.map((f: any) => path.basename(f.file)),
      ['stripe-2024-01-05.jsonl.gz', 'stripe-2024-01-06.jsonl.gz'],
    );
    assert.deepEqual(await snapshot(), before);
    assert.equal(existsSync(path.join(archiveDir, 'stripe')), false, 'no archive written');

    const purge = await runInboxctl(['purge', '--older-than', '30d'], env);
    assert.equal(purge.code, 0, purge.stderr);
    assert.match(purge.out, /stripe: 2 rows received before .* archived and deleted/);
    assert.deepEqual(await readdir(path.join(archiveDir, 'stripe')), ['stripe-2024-01-05.jsonl.gz', 'stripe-2024-01-06.jsonl.gz']);
    const left = (await snapshot()).map((r) => r.event_id);
    assert.ok(!left.includes('evt_old_1') && !left.includes('evt_old_2') && left.includes('evt_old_failed') && left.includes('evt_recent'));

    const file = path.join(archiveDir, 'stripe', 'stripe-2024-01-05.jsonl.gz');
    const printed = await runInboxctl(['restore', file, '--print'], env);
    assert.equal(printed.code, 0, printed.stderr);
    const line = printed.out.trim();
    assert.equal(JSON.parse(line).raw_body, rawBody.toString('utf8'));
    assert.match(line, /"amount":12345678901234567890/, 'the payload prints exactly');

    const files = ['stripe-2024-01-05.jsonl.gz', 'stripe-2024-01-06.jsonl.gz'].map((f) => path.join(archiveDir, 'stripe', f));
    // A flag written before the files is a flag: cac alone took "--dry-run FILE1" as the flag's
    // value, so FILE2 was restored for real.
    const purged = await snapshot();
    const dryRestore = await runInboxctl(['restore', '--dry-run', ...files, '--json'], env);
    assert.equal(dryRestore.code, 0, dryRestore.stderr);
    assert.deepEqual(
      dryRestore.json().map((r: any) => [r.dryRun, r.inserted]),
      [
        [true, 1],
        [true, 1],
      ],
    );
    assert.deepEqual(await snapshot(), purged, 'a dry run restores nothing');

    const restore = await runInboxctl(['restore', ...files], env);
    assert.equal(restore.code, 0, restore.stderr);
    assert.match(restore.out, /1 event read, 1 inserted, 0 already in the inbox/);
    assert.deepEqual(await snapshot(), before, 'every row back, raw bytes and exact payload included');

    const twice = await runInboxctl(['restore', file, '--json'], env);
    assert.deepEqual(
      twice.json().map((r: any) => [r.inserted, r.skipped]),
      [[0, 1]],
    );
  });
});
