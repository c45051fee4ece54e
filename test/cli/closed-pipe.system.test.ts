/**
 * Every command of `inboxctl … | head` in the real bin, each a process of its own whose stdout's
 * reader is gone. The fast tier's closed-pipe.test.ts runs the same commands in process on a
 * closed pipe, and two of them through the bin.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { daysAgo, insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { runInboxctl, spawnInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let archiveDir: string;
let env: Record<string, string>;
let archiveFile: string;

setup(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inboxctl-pipe-'));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_pipe', INBOX_ARCHIVE_DIR: archiveDir };
  // Enough archived events that restore --print is still writing when the reader has gone.
  const old = Array.from({ length: 300 }, (_, i) => ({
    eventId: `evt_pipe_old_${i}`,
    status: 'processed' as const,
    receivedAt: daysAgo(60),
    processedAt: daysAgo(60),
  }));
  await insertInboxRows(database.sql, [...old, { eventId: 'evt_pipe_failed', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(5) }]);
  const purge = await runInboxctl(['purge', '--older-than', '40d'], env);
  assert.equal(purge.code, 0, purge.stderr);
  archiveFile = path.join(archiveDir, 'stripe', (await readdir(path.join(archiveDir, 'stripe')))[0]!);
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

describe('a reader that closes the pipe (`inboxctl … | head`)', () => {
  // The exit code is the command's own answer, whoever stopped reading: stats still says 1
  // because an event failed.
  const commands: Array<[args: string[], code: number]> = [
    [['show', 'stripe', 'evt_pipe_failed'], 0],
    [['show', 'stripe', 'evt_pipe_failed', '--json'], 0],
    [['show', 'stripe', 'evt_pipe_failed', '--raw'], 0],
    [['stats'], 1],
    [['stats', '--json'], 1],
    [['replay', 'stripe', '--dry-run'], 0],
    [['purge', '--older-than', '40d', '--dry-run'], 0],
    [['sweep', '--json'], 0],
    [['restore', '--print', 'ARCHIVE'], 0],
    [['restore', '--dry-run', 'ARCHIVE'], 0],
    [['--help'], 0],
  ];
  for (const [args, code] of commands) {
    test(`inboxctl ${args.join(' ')} ends quietly with exit ${code}`, async () => {
      // The real bin in a process of its own: the pipe and its EPIPE are the process's stdout.
      const run = await spawnInboxctl(
        args.map((a) => (a === 'ARCHIVE' ? archiveFile : a)),
        env,
        { closeStdout: true },
      );
      assert.equal(run.stderr, '', 'no stack trace, nothing on stderr');
      assert.equal(run.code, code);
    });
  }
});
