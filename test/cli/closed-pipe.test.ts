/**
 * `inboxctl … | head`: the reader closes the pipe and every write meets EPIPE. Each command ends
 * quietly with its own exit code. In process, stdout is closedPipeSafe (what the bin wraps its
 * stdout in) over a real pipe whose reader has exited; two commands also run through the real bin,
 * where the pipe is the process's stdout. closed-pipe.system.test.ts runs every command through the bin.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { closedPipeSafe } from '../../src/cli/closed-pipe.ts';
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

/** The writing end of a pipe whose reader has exited without reading: a write fails with EPIPE. */
async function pipeWithoutReader(): Promise<Writable> {
  const reader = spawn('true', { stdio: ['pipe', 'ignore', 'ignore'] });
  await once(reader, 'exit');
  return reader.stdin;
}

const withArchive = (args: string[]) => args.map((a) => (a === 'ARCHIVE' ? archiveFile : a));

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
      const pipe = await pipeWithoutReader();
      const stdout = closedPipeSafe(pipe);
      const run = await runInboxctl(withArchive(args), env, { stdout });
      assert.equal(run.stderr, '', 'no stack trace, nothing on stderr');
      assert.equal(run.code, code);
      // The pipe's EPIPE arrives a tick after the write that met it; it is handled, not thrown.
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(stdout.closed, 'the write met the closed pipe');
    });
  }

  for (const [args, code] of [
    [['stats'], 1],
    [['restore', '--print', 'ARCHIVE'], 0],
  ] as const) {
    test(`the bin: inboxctl ${args.join(' ')} ends quietly with exit ${code}`, async () => {
      const run = await spawnInboxctl(withArchive([...args]), env, { closeStdout: true });
      assert.equal(run.stderr, '', 'no stack trace, nothing on stderr');
      assert.equal(run.code, code);
    });
  }
});
