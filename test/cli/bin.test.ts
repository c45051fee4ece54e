/**
 * The one place the real `inboxctl` bin runs as a process of its own (closed-pipe.test.ts aside):
 * every other CLI test calls the runner the bin calls, in process. This checks what only the bin
 * does — reading process.argv and process.env, writing the process's stdout and stderr, and
 * turning the runner's answer into the exit code — and that it answers byte for byte as the
 * runner does in process.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { runInboxctl, spawnInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let env: Record<string, string>;

setup(async () => {
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_bin' };
  await insertInboxRows(database.sql, [{ eventId: 'evt_bin_failed', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(5) }]);
});

describe('the inboxctl bin, spawned', () => {
  test('the help on stdout, exit 0', async () => {
    const run = await spawnInboxctl(['--help'], {});
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    assert.match(run.out, /Usage:\n {2}\$ inboxctl <command> \[options\]/);
    assert.equal(run.out, (await runInboxctl(['--help'], {})).out, 'the same help as in process');
  });

  test('a usage error: one line on stderr, exit 2', async () => {
    const run = await spawnInboxctl(['stauts'], {});
    assert.equal(run.code, 2);
    assert.equal(run.out, '');
    assert.match(run.stderr, /^inboxctl: unknown command "stauts"[^\n]*\n$/);
  });

  // The exit code of an answer that is not 0 (stats: 1) through the bin is closed-pipe.test.ts's.
  test('a command against the database: its answer on stdout, as in process, exit 0', async () => {
    const spawned = await spawnInboxctl(['show', 'stripe', 'evt_bin_failed', '--json'], env);
    assert.equal(spawned.code, 0, spawned.stderr);
    assert.equal(spawned.json<{ eventId: string }>().eventId, 'evt_bin_failed');
    const inProcess = await runInboxctl(['show', 'stripe', 'evt_bin_failed', '--json'], env);
    assert.deepEqual(spawned.json(), inProcess.json());
  });
});
