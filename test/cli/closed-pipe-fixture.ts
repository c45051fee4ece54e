/**
 * What closed-pipe.test.ts (in process) and closed-pipe.system.test.ts (every command through the
 * bin) share: a database with a failed event and an archive to restore, and the commands with the
 * exit code each must still give when its reader has gone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { daysAgo, insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

/**
 * The exit code is the command's own answer, whoever stopped reading: stats still says 1 because
 * an event failed. `ARCHIVE` stands for the archive file the fixture wrote.
 */
export const closedPipeCommands: Array<[args: string[], code: number]> = [
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

export interface ClosedPipeFixture {
  /** The environment inboxctl runs with (set once the file's setup has run). */
  env(): Record<string, string>;
  /** The arguments with `ARCHIVE` replaced by the archive file's path. */
  withArchive(args: readonly string[]): string[];
}

/** Registers the file's database, its setup and its cleanup; call at the top of a test file. */
export function useClosedPipeFixture(): ClosedPipeFixture {
  const database = useTestDatabase();
  let archiveDir: string | undefined;
  let env: Record<string, string> = {};
  let archiveFile = '';

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

  return {
    env: () => env,
    withArchive: (args) => args.map((a) => (a === 'ARCHIVE' ? archiveFile : a)),
  };
}
