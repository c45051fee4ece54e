/**
 * `inboxctl … | head`: the reader closes the pipe and every write meets EPIPE. Each command ends
 * quietly with its own exit code. In process, stdout is closedPipeSafe (what the bin wraps its
 * stdout in) over a real pipe whose reader has exited; two commands also run through the real bin,
 * where the pipe is the process's stdout. closed-pipe.system.test.ts runs every command through the bin.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { closedPipeSafe } from '../../src/cli/closed-pipe.ts';
import { closedPipeCommands, useClosedPipeFixture } from './closed-pipe-fixture.ts';
import { runInboxctl, spawnInboxctl } from './run-inboxctl.ts';

const fixture = useClosedPipeFixture();

/** The writing end of a pipe whose reader has exited without reading: a write fails with EPIPE. */
async function pipeWithoutReader(): Promise<Writable> {
  const reader = spawn('true', { stdio: ['pipe', 'ignore', 'ignore'] });
  await once(reader, 'exit');
  return reader.stdin;
}

describe('a reader that closes the pipe (`inboxctl … | head`)', () => {
  for (const [args, code] of closedPipeCommands) {
    test(`inboxctl ${args.join(' ')} ends quietly with exit ${code}`, async () => {
      const pipe = await pipeWithoutReader();
      const stdout = closedPipeSafe(pipe);
      const run = await runInboxctl(fixture.withArchive(args), fixture.env(), { stdout });
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
      const run = await spawnInboxctl(fixture.withArchive(args), fixture.env(), { closeStdout: true });
      assert.equal(run.stderr, '', 'no stack trace, nothing on stderr');
      assert.equal(run.code, code);
    });
  }
});
