import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { createArchiveWriter, readArchive } from '../../src/operations/archive.ts';
import { OperationRefusedError } from '../../src/operations/errors.ts';
import { restoreArchive } from '../../src/operations/restore.ts';
import { applyRetention, checkPurgeCutoff, purgeEvents } from '../../src/operations/retention.ts';
import { testConfig } from '../support/config.ts';
import { daysAgo, insertInboxRows, useOperationsHarness } from './harness.ts';

const h = useOperationsHarness();
let archiveDir: string;
const now = new Date();

before(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inbox-archive-'));
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const deps = () => ({ db: h.handle.db, archive: createArchiveWriter({ clock: () => new Date() }) });

async function rowsOf(provider: string) {
  return h.database.sql`
    select id, event_id, status, raw_body, payload::text as payload_text, payload_lossy, fact::text as fact_text, fingerprint, source, decision, decision_detail::text as decision_detail_text, verification::text as verification_text, attempts, last_error,
           received_at::text as received_at, occurred_at::text as occurred_at, processed_at::text as processed_at
    from webhook_inbox where provider = ${provider} order by id`;
}

// Bytes a JSON round trip would not preserve: odd whitespace, key order, escapes, a 64-bit id.
const awkwardBodies = [
  Buffer.from('{"id":"evt_x1",  "type":"charge.succeeded","amount":9007199254740993,"nested":{"b":1,"a":"\\u00e9 é"}}\n'),
  Buffer.from('id=4251420&event=transaction_status_changed&transaction%5Bstatus%5D=paid&name=Jo%C3%A3o'),
  Buffer.concat([Buffer.from('{"id":"evt_x3","bin":"'), Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from('"}')]),
];

describe('purge (archive, then delete)', () => {
  test('keeps the window, archives and deletes the rest, and the archive restores byte for byte', async () => {
    const provider = 'keep';
    await insertInboxRows(h.database.sql, [
      {
        provider,
        eventId: 'old-1',
        status: 'processed',
        receivedAt: new Date('2024-01-05T10:00:00.123456Z'),
        processedAt: new Date('2024-01-05T10:00:01Z'),
        attempts: 1,
        rawBody: awkwardBodies[0],
      },
      { provider, eventId: 'old-2', status: 'ignored', receivedAt: new Date('2024-01-05T23:59:59Z'), rawBody: awkwardBodies[1] },
      { provider, eventId: 'old-3', status: 'processed', receivedAt: new Date('2024-01-06T00:00:00Z'), rawBody: awkwardBodies[2] },
      { provider, eventId: 'old-failed', status: 'failed', lastError: 'boom', receivedAt: new Date('2024-01-06T01:00:00Z') },
      { provider, eventId: 'old-pending', status: 'pending', receivedAt: new Date('2024-01-06T02:00:00Z') },
      { provider, eventId: 'recent', status: 'processed', receivedAt: daysAgo(29, now) },
    ]);
    await h.database
      .sql`update webhook_inbox set fact = '{"kind":"payment.paid","chargeId":"ch_1","amount":9007199254740993}' where provider = ${provider} and event_id = 'old-1'`;
    await h.database.sql`update webhook_inbox set fingerprint = 'fingerprint-of-' || event_id where provider = ${provider} and event_id in ('old-1', 'old-3')`;
    // A backfilled row stays one through the archive.
    await h.database.sql`update webhook_inbox set source = 'backfill' where provider = ${provider} and event_id = 'old-2'`;
    await h.database
      .sql`update webhook_inbox set decision = 'rejected_transition', decision_detail = '{"from":"refunded","to":"disputed","occurredAt":"2024-01-05T09:59:59.000Z"}' where provider = ${provider} and event_id = 'old-2'`;
    // The proof of verification travels with the row: `inboxctl verify` works on a restored event.
    await h.database
      .sql`update webhook_inbox set verification = '{"scheme":"stripe-v1","secret":{"position":2,"fingerprint":"0a1b2c3d4e5f"},"signedAt":"2024-01-05T09:59:59.000Z","verifiedAt":"2024-01-05T10:00:00.100Z","signed":{"headers":{"stripe-signature":"t=1704448799,v1=ab"}}}' where provider = ${provider} and event_id = 'old-1'`;
    // The body that is not UTF-8: its payload is marked lossy, and the mark survives the round trip.
    await h.database.sql`update webhook_inbox set payload_lossy = true where provider = ${provider} and event_id = 'old-3'`;
    // Exact µs timestamps as stored, to compare after the round trip.
    await h.database.sql`update webhook_inbox set received_at = '2024-01-05T10:00:00.123456Z' where provider = ${provider} and event_id = 'old-1'`;
    const before = await rowsOf(provider);

    const result = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    assert.equal(result.deleted, 3);
    assert.deepEqual(
      result.files.map((f) => [path.basename(f.file), f.rows]),
      [
        ['keep-2024-01-05.jsonl.gz', 2],
        ['keep-2024-01-06.jsonl.gz', 1],
      ],
    );
    assert.deepEqual(
      (await rowsOf(provider)).map((r) => r.event_id),
      ['old-failed', 'old-pending', 'recent'],
      'failed and pending rows and the window stay',
    );

    for (const { file } of result.files) assert.equal((await restoreArchive(h.handle.db, file)).read > 0, true);
    const restored = await rowsOf(provider);
    assert.deepEqual(restored, before, 'every column, raw bytes included, is back as it was');
    for (const [i, body] of awkwardBodies.entries()) assert.ok(Buffer.from(restored[i]!.raw_body).equals(body));
  });

  test('the archive is gzip JSON Lines a person can read with standard tools', async () => {
    const provider = 'readable';
    await insertInboxRows(h.database.sql, [{ provider, eventId: 'evt_read', status: 'processed', receivedAt: new Date('2024-02-01T12:00:00Z') }]);
    const { files } = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    const lines = gunzipSync(await readFile(files[0]!.file))
      .toString('utf8')
      .trim()
      .split('\n');
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!);
    assert.equal(line.event_id, 'evt_read');
    assert.equal(Buffer.from(line.raw_body_base64, 'base64').toString('utf8'), JSON.stringify({ id: 'evt_read', type: 'charge.succeeded' }));
  });

  test('a dry run lists the files and counts and changes nothing', async () => {
    const provider = 'dry';
    await insertInboxRows(h.database.sql, [
      { provider, eventId: 'd1', status: 'processed', receivedAt: new Date('2024-03-01T00:00:00Z') },
      { provider, eventId: 'd2', status: 'ignored', receivedAt: new Date('2024-03-02T00:00:00Z') },
    ]);
    const result = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir, dryRun: true });
    assert.equal(result.deleted, 2);
    assert.deepEqual(
      result.files.map((f) => [path.basename(f.file), f.rows]),
      [
        ['dry-2024-03-01.jsonl.gz', 1],
        ['dry-2024-03-02.jsonl.gz', 1],
      ],
    );
    assert.equal((await rowsOf(provider)).length, 2);
    assert.equal(existsSync(path.join(archiveDir, provider)), false);
  });

  test('works in small batches: every row archived once and deleted', async () => {
    const provider = 'batches';
    const rows = Array.from({ length: 7 }, (_, i) => ({
      provider,
      eventId: `b${i}`,
      status: 'processed' as const,
      receivedAt: new Date(Date.UTC(2024, 3, 1, 0, i)),
    }));
    await insertInboxRows(h.database.sql, rows);
    const result = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir, batchSize: 2 });
    assert.equal(result.deleted, 7);
    const archived = [];
    for await (const event of readArchive(result.files[0]!.file)) archived.push(event.event_id);
    assert.deepEqual(
      archived,
      rows.map((r) => r.eventId),
    );
  });

  test('failed rows are purged only when asked; restoring twice inserts nothing the second time', async () => {
    const provider = 'failed-too';
    await insertInboxRows(h.database.sql, [{ provider, eventId: 'f1', status: 'failed', lastError: 'x', receivedAt: new Date('2024-05-01T00:00:00Z') }]);
    assert.equal((await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir })).deleted, 0);
    const result = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir, statuses: ['failed'] });
    assert.equal(result.deleted, 1);
    const file = result.files[0]!.file;
    assert.deepEqual(await restoreArchive(h.handle.db, file, { dryRun: true }), { file, dryRun: true, read: 1, inserted: 1, skipped: 0 });
    assert.equal((await rowsOf(provider)).length, 0, 'a dry-run restore writes nothing');
    assert.deepEqual(await restoreArchive(h.handle.db, file), { file, dryRun: false, read: 1, inserted: 1, skipped: 0 });
    assert.deepEqual(await restoreArchive(h.handle.db, file), { file, dryRun: false, read: 1, inserted: 0, skipped: 1 });
    assert.equal((await rowsOf(provider))[0]!.status, 'failed');
  });

  test('a torn archive file is set aside and a fresh one started; the torn one reads up to the tear', async () => {
    const provider = 'torn';
    await insertInboxRows(h.database.sql, [{ provider, eventId: 't1', status: 'processed', receivedAt: new Date('2024-06-01T00:00:00Z') }]);
    const first = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    const file = first.files[0]!.file;
    await appendFile(file, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01])); // a crash mid-append
    await insertInboxRows(h.database.sql, [{ provider, eventId: 't2', status: 'processed', receivedAt: new Date('2024-06-01T01:00:00Z') }]);
    await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    const names = (await readdir(path.dirname(file))).sort();
    assert.equal(names.length, 2);
    assert.match(names[1]!, /^torn-2024-06-01\.jsonl\.gz\.damaged-/);
    const fresh = [];
    for await (const event of readArchive(file)) fresh.push(event.event_id);
    assert.deepEqual(fresh, ['t2']);
    const torn: string[] = [];
    await assert.rejects(async () => {
      for await (const event of readArchive(path.join(path.dirname(file), names[1]!))) torn.push(event.event_id);
    }, /cannot decompress/);
    assert.deepEqual(torn, ['t1']);
  });

  test('a tail of zero bytes (a crash that grew the file but wrote no data) is a tear too: set aside, never appended after', async () => {
    const provider = 'zeros';
    await insertInboxRows(h.database.sql, [{ provider, eventId: 'z1', status: 'processed', receivedAt: new Date('2024-09-01T00:00:00Z') }]);
    const first = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    const file = first.files[0]!.file;
    await appendFile(file, Buffer.alloc(4096)); // gunzip takes zeros after a member for padding and stops reading there
    await insertInboxRows(h.database.sql, [{ provider, eventId: 'z2', status: 'processed', receivedAt: new Date('2024-09-01T01:00:00Z') }]);
    await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    const names = (await readdir(path.dirname(file))).sort();
    assert.equal(names.length, 2, `set aside and a fresh file started: ${names.join(', ')}`);
    assert.match(names[1]!, /^zeros-2024-09-01\.jsonl\.gz\.damaged-/);
    const fresh = [];
    for await (const event of readArchive(file)) fresh.push(event.event_id);
    assert.deepEqual(fresh, ['z2'], 'z2, deleted from the inbox, is readable');
    const torn: string[] = [];
    await assert.rejects(
      async () => {
        for await (const event of readArchive(path.join(path.dirname(file), names[1]!))) torn.push(event.event_id);
      },
      /after the last whole gzip member/,
      'reading the damaged file says where it stops',
    );
    assert.deepEqual(torn, ['z1']);
  });

  test('a row archived twice (a crash after the fsync, before the DELETE committed) is restored once', async () => {
    const provider = 'twice';
    await insertInboxRows(h.database.sql, [
      { provider, eventId: 'w1', status: 'processed', receivedAt: new Date('2024-08-01T00:00:00Z') },
      { provider, eventId: 'w2', status: 'ignored', receivedAt: new Date('2024-08-01T01:00:00Z') },
    ]);
    const before = await rowsOf(provider);
    const archive = createArchiveWriter({ clock: () => new Date() });
    const crashAfterFsync = {
      append: async (file: string, events: Parameters<typeof archive.append>[1]) => {
        await archive.append(file, events);
        throw new Error('crash before COMMIT');
      },
    };
    await assert.rejects(purgeEvents({ db: h.handle.db, archive: crashAfterFsync }, { provider, cutoff: daysAgo(30, now), archiveDir }));
    assert.equal((await rowsOf(provider)).length, 2, 'in the database and in the archive: both');
    const result = await purgeEvents(deps(), { provider, cutoff: daysAgo(30, now), archiveDir });
    const file = result.files[0]!.file;
    const lines = [];
    for await (const event of readArchive(file)) lines.push(event.event_id);
    assert.deepEqual(lines, ['w1', 'w1', 'w2'], 'the next run archived w1 again (the processed batch crashed; the ignored one never ran)');

    assert.deepEqual(await restoreArchive(h.handle.db, file, { dryRun: true }), { file, dryRun: true, read: 3, inserted: 2, skipped: 1 });
    assert.deepEqual(await restoreArchive(h.handle.db, file), { file, dryRun: false, read: 3, inserted: 2, skipped: 1 });
    assert.deepEqual(await rowsOf(provider), before);
  });

  test('an aborted signal stops between batches; what was done stays done', async () => {
    const provider = 'stop';
    await insertInboxRows(
      h.database.sql,
      Array.from({ length: 4 }, (_, i) => ({ provider, eventId: `s${i}`, status: 'processed' as const, receivedAt: new Date(Date.UTC(2024, 6, 1, i)) })),
    );
    const controller = new AbortController();
    const archive = createArchiveWriter({ clock: () => new Date() });
    const result = await purgeEvents(
      {
        db: h.handle.db,
        archive: {
          append: async (file, events) => {
            await archive.append(file, events);
            controller.abort();
          },
        },
      },
      { provider, cutoff: daysAgo(30, now), archiveDir, batchSize: 2, signal: controller.signal },
    );
    assert.equal(result.stopped, true);
    assert.equal(result.deleted, 2);
    assert.equal((await rowsOf(provider)).length, 2);
  });
});

describe('the daily retention job', () => {
  test('each configured provider keeps exactly its own window', async () => {
    const config = testConfig(
      { WEBHOOK_SECRET_STRIPE: 'whsec_a', WEBHOOK_SECRET_STRIPE_BR: 'whsec_b', INBOX_CONFIG: '/cfg.json' },
      { '/cfg.json': JSON.stringify({ providers: { 'stripe-br': { driver: 'stripe', retentionDays: 10 } } }) },
    );
    await insertInboxRows(h.database.sql, [
      { provider: 'stripe', eventId: 'ret-s-31', status: 'processed', receivedAt: daysAgo(31, now) },
      { provider: 'stripe', eventId: 'ret-s-20', status: 'processed', receivedAt: daysAgo(20, now) },
      { provider: 'stripe-br', eventId: 'ret-br-20', status: 'ignored', receivedAt: daysAgo(20, now) },
      { provider: 'stripe-br', eventId: 'ret-br-9', status: 'processed', receivedAt: daysAgo(9, now) },
      { provider: 'unconfigured', eventId: 'ret-u-400', status: 'processed', receivedAt: daysAgo(400, now) },
    ]);
    const { providers: results } = await applyRetention(deps(), { providers: config.providers, now, archiveDir });
    assert.deepEqual(results.map((r) => [r.provider, r.deleted]).sort(), [
      ['stripe', 1],
      ['stripe-br', 1],
    ]);
    const left = await h.database.sql`select event_id from webhook_inbox where event_id like 'ret-%' order by event_id`;
    assert.deepEqual(
      left.map((r) => r.event_id),
      ['ret-br-9', 'ret-s-20', 'ret-u-400'],
    );
  });
});

describe('checkPurgeCutoff', () => {
  const config = testConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_a' });

  test('refuses a cut-off inside the dedupe window unless forced', () => {
    assert.throws(
      () => checkPurgeCutoff('stripe', daysAgo(29, now), now, config.providers, false),
      (e: unknown) => e instanceof OperationRefusedError && e.code === 'inside_dedupe_window',
    );
    assert.deepEqual(checkPurgeCutoff('stripe', daysAgo(30, now), now, config.providers, false), []);
    const warnings = checkPurgeCutoff('stripe', daysAgo(1, now), now, config.providers, true);
    assert.equal(warnings.length, 2, 'forced inside the window, and inside the gateway resend window');
    assert.match(warnings[1]!, /resend window/);
  });

  test('a provider this configuration does not know needs --force', () => {
    assert.throws(
      () => checkPurgeCutoff('zoop', daysAgo(400, now), now, config.providers, false),
      (e: unknown) => e instanceof OperationRefusedError && e.code === 'dedupe_window_unknown',
    );
    assert.equal(checkPurgeCutoff('zoop', daysAgo(400, now), now, config.providers, true).length, 1);
  });
});
