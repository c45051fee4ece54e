import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { daysAgo, insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { repoRoot, runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let env: Record<string, string>;
let scratch: string;

// Rows old enough for a purge and failed ones for a replay, so a value that slipped through
// validation would reach the database (where the failures this file guards against happened).
setup(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'inboxctl-hostile-'));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_hostile', INBOX_ARCHIVE_DIR: scratch };
  await insertInboxRows(database.sql, [
    { eventId: 'evt_h_old', status: 'processed', receivedAt: daysAgo(60), processedAt: daysAgo(60) },
    { eventId: 'evt_h_failed', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(30) },
    { eventId: 'evt_h_pending', status: 'pending', receivedAt: minutesAgo(30) },
  ]);
});

after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const snapshot = async () => ({
  rows: await database.sql`select id, event_id, status, attempts, last_error from webhook_inbox order by id`,
  jobs: (await database.sql`select count(*)::int as n from pgboss.job`)[0]!.n,
});

/**
 * The contract for a bad value: exit 2, exactly one line on stderr that names what was wrong,
 * nothing on stdout (with --json, that line as the error object); no stack trace, no SQL, no help text.
 */
async function assertRefused(args: string[], named: string) {
  const run = await runInboxctl(args, env);
  const what = `inboxctl ${args.map((a) => JSON.stringify(a)).join(' ')}`;
  assert.equal(run.code, 2, `${what}: exit ${run.code}\n${run.stderr}${run.out}`);
  if (args.includes('--json'))
    assert.deepEqual(
      run.json(),
      { error: { code: 'usage', exitCode: 2, message: run.stderr.replace(/^inboxctl: /, '').trimEnd() } },
      `${what}: the error alone on stdout`,
    );
  else assert.equal(run.out, '', `${what}: nothing on stdout`);
  assert.match(run.stderr, /^inboxctl: [^\n]+\n$/, `${what}: one line on stderr, got:\n${run.stderr}`);
  assert.doesNotMatch(run.stderr, /\n\s+at |Failed query|params:|\bselect\b|Usage:|Options:/i, `${what}: no stack, SQL or help`);
  assert.ok(run.stderr.includes(named), `${what}: the message names ${JSON.stringify(named)}; got ${run.stderr}`);
}

/** A few at a time: each case is a process of its own. */
async function assertAllRefused(cases: Array<[args: string[], named: string]>) {
  const before = await snapshot();
  for (let i = 0; i < cases.length; i += 4) await Promise.all(cases.slice(i, i + 4).map(([args, named]) => assertRefused(args, named)));
  assert.deepEqual(await snapshot(), before, 'nothing changed');
}

describe('the odd inputs reported in issue 11', () => {
  test('restore of a missing file says the file is missing (exit 2)', async () => {
    await assertRefused(['restore', '/nonexistent.gz'], '/nonexistent.gz: no such file');
  });

  test('a duration too long for a date is a usage error, not "stopped part-way"', async () => {
    await assertRefused(['stats', '--since', '99999999999d'], '99999999999d');
    await assertRefused(['replay', 'stripe', '--since', '999999999d', '--dry-run'], '999999999d');
  });

  test('a purge cut-off before any date the database holds is refused without printing SQL', async () => {
    await assertRefused(['purge', '--older-than', '99999999d', '--dry-run'], '99999999d');
  });

  test('a negative duration is named as the bad value, not read as flags (-5 -h) that print the help', async () => {
    await assertRefused(['replay', 'stripe', '--since', '-5h'], '"-5h"');
    await assertRefused(['replay', 'stripe', '--since=-5h'], '"-5h"');
  });
});

describe('every command answers a hostile value with one line and exit 2, changing nothing', () => {
  test('replay', async () => {
    await assertAllRefused([
      [['replay', 'stripe', '--since', ''], '--since'],
      [['replay', 'stripe', '--since', '2026-02-30'], '2026-02-30'],
      [['replay', 'stripe', '--since', '2026-13-01T00:00:00Z'], '2026-13-01'],
      [['replay', 'stripe', '--until', '0000-01-01'], '0000-01-01'],
      [['replay', 'stripe', '--since', '1e3d'], '1e3d'],
      [['replay', 'stripe', '--since', '1h', '--since', '2h'], '--since'],
      [['replay', 'stripe', '--since', '2h', '--until', '3h'], '--since'],
      [['replay', 'stripe', '--status', 'processed'], 'processed'],
      [['replay', 'stripe', '--status', ''], '--status'],
      [['replay', 'stripe', '--status', 'failed,'], '--status'],
      [['replay', 'stripe', '--batch-size', '0'], '--batch-size'],
      [['replay', 'stripe', '--batch-size', '-1'], '"-1"'],
      [['replay', 'stripe', '--batch-size', '1e3'], '1e3'],
      [['replay', 'stripe', '--batch-size', '2.5'], '2.5'],
      [['replay', 'stripe', '--batch-size', '99999999999999999999'], '99999999999999999999'],
      [['replay', 'stripe', '--event-id', ''], '--event-id'],
      // A forgotten value of the repeatable --event-id: cac made the bare flag the text "true", and replayed that id.
      [['replay', 'stripe', '--event-id'], '--event-id'],
      [['replay', 'stripe', '--event-id', '--dry-run'], '--event-id'],
      [['replay', 'stripe', '--event-id', 'evt_h_failed', '--event-id'], '--event-id'],
      [['replay', 'nosuchpay', '--status', 'failed'], 'nosuchpay'],
      [['replay', ''], 'provider'],
    ]);
  });

  test('stats', async () => {
    await assertAllRefused([
      [['stats', '--since', '-1h'], '"-1h"'],
      [['stats', '--since', ''], '--since'],
      [['stats', '--since', 'yesterday'], 'yesterday'],
      [['stats', '--max-pending-age', '-10m'], '"-10m"'],
      [['stats', '--max-pending-age', '99999999999d'], '99999999999d'],
      [['stats', '--max-pending-age', '10'], '"10"'],
      [['stats', '--max-pending-age', ''], '--max-pending-age'],
      [['stats', '--provider', ''], '--provider'],
      [['stats', '--provider', 'nosuchpay'], 'nosuchpay'],
      [['stats', '--provider', 'stripe', '--provider', 'asaas'], '--provider'],
    ]);
  });

  test('purge', async () => {
    await assertAllRefused([
      [['purge', '--older-than', '-5d', '--dry-run'], '"-5d"'],
      [['purge', '--older-than', '', '--dry-run'], '--older-than'],
      [['purge', '--older-than', '40', '--dry-run'], '"40"'],
      [['purge', '--dry-run'], '--older-than'],
      [['purge', '--older-than', '40d', '--batch-size', '0'], '--batch-size'],
      [['purge', '--older-than', '40d', '--batch-size', '10001'], '10001'],
      [['purge', '--older-than', '40d', '--provider', 'nosuchpay', '--dry-run', '--force'], 'nosuchpay'],
      [['purge', '--older-than', '40d', '--provider', '', '--dry-run'], '--provider'],
      [['purge', '--older-than', '40d', '--archive', ''], '--archive'],
      [['purge', '--older-than', '40d', '--archive', path.join(repoRoot, 'README.md', 'archive')], 'README.md'],
      // Node's recursive mkdir never returns under /proc (found by an outside probe: a core spun forever).
      [['purge', '--older-than', '40d', '--archive', '/proc/inbox-archive'], '/proc/inbox-archive'],
    ]);
  });

  test('restore', async () => {
    const notAnArchive = path.join(scratch, 'readme.jsonl.gz');
    await writeFile(notAnArchive, gzipSync(await readFile(path.join(repoRoot, 'README.md'))));
    await assertAllRefused([
      [['restore', notAnArchive], 'line 1: not JSON'],
      [['restore', '--print', '/nonexistent.gz'], '/nonexistent.gz: no such file'],
      [['restore', '--dry-run', scratch], 'is a directory'],
      [['restore', path.join(repoRoot, 'README.md')], 'not a gzip file'],
      [['restore'], 'archive file'],
    ]);
  });

  test('show', async () => {
    await assertAllRefused([
      [['show', 'stripe', ''], 'event id'],
      [['show', 'nosuchpay', 'evt_h_old'], 'nosuchpay'],
      [['show', 'stripe', 'evt_h_old', '--raw', '--json'], '--raw'],
      [['show', 'stripe'], '"stripe" is not an inbox id'],
      [['show', '0'], '"0"'],
      [['show'], 'missing'],
    ]);
  });

  test('sweep', async () => {
    await assertAllRefused([
      [['sweep', '--older-than', '-5m'], '"-5m"'],
      [['sweep', '--older-than', '99999999999d'], '99999999999d'],
      [['sweep', '--older-than', ''], '--older-than'],
      [['sweep', '--limit', '0'], '--limit'],
      [['sweep', '--limit', '-1'], '"-1"'],
      [['sweep', '--limit', 'abc'], 'abc'],
      [['sweep', '--limit', '10001'], '10001'],
    ]);
  });

  test('backfill', async () => {
    await assertAllRefused([
      [['backfill', 'stripe', '--since', '-5h'], '"-5h"'],
      [['backfill', 'stripe', '--since', ''], '--since'],
      [['backfill', 'stripe', '--since', 'yesterday'], 'yesterday'],
      [['backfill', 'stripe', '--since', '1h', '--since', '2h'], '--since'],
      [['backfill', 'stripe'], '--since'],
      [['backfill', '', '--since', '1h'], 'provider'],
      [['backfill', 'nosuchpay', '--since', '1h'], 'nosuchpay'],
      // Configured, but no API key to list its events with.
      [['backfill', 'stripe', '--since', '1h'], 'GATEWAY_API_KEY_STRIPE'],
    ]);
  });

  test('any command: an unknown option, a missing value, a stray argument', async () => {
    await assertAllRefused([
      [['stats', '--bogus'], '--bogus'],
      [['stats', '--since'], '--since'],
      [['stats', '--since', '--json'], '--since'],
      [['sweep', 'now'], 'now'],
      [['nosuch'], 'nosuch'],
    ]);
  });
});
