/**
 * Every command of `inboxctl … | head` in the real bin, each a process of its own whose stdout's
 * reader is gone. The fast tier's closed-pipe.test.ts runs the same commands in process on a
 * closed pipe, and two of them through the bin.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { closedPipeCommands, useClosedPipeFixture } from './closed-pipe-fixture.ts';
import { spawnInboxctl } from './run-inboxctl.ts';

const fixture = useClosedPipeFixture();

describe('a reader that closes the pipe (`inboxctl … | head`)', () => {
  for (const [args, code] of closedPipeCommands) {
    test(`inboxctl ${args.join(' ')} ends quietly with exit ${code}`, async () => {
      // The real bin in a process of its own: the pipe and its EPIPE are the process's stdout.
      const run = await spawnInboxctl(fixture.withArchive(args), fixture.env(), { closeStdout: true });
      assert.equal(run.stderr, '', 'no stack trace, nothing on stderr');
      assert.equal(run.code, code);
    });
  }
});
