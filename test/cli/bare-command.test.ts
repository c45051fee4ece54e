/**
 * `inboxctl` with nothing after it, as a new operator types it to see what it does: the help, on
 * stdout, exit 0 (as git's subcommands, docker, kubectl and gh do). A wrong command line stays
 * one line on stderr and exit 2; a bare `--json` is exit 2 too, its error as JSON (what a script parses).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runInboxctl } from './run-inboxctl.ts';

test('bare inboxctl: the help on stdout, nothing on stderr, exit 0', async () => {
  const run = await runInboxctl([], {});
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stderr, '');
  assert.match(run.out, /^inboxctl\/\S+/);
  assert.match(run.out, /Usage:\n {2}\$ inboxctl <command> \[options\]/);
  assert.match(run.out, /Commands:[\s\S]*stats[\s\S]*purge/);
});

test('an unknown command: one line on stderr, exit 2; a bare --json: exit 2, the usage error as JSON', async () => {
  const unknown = await runInboxctl(['stauts'], {});
  assert.equal(unknown.code, 2);
  assert.equal(unknown.out, '');
  assert.equal(unknown.stderr.trim().split('\n').length, 1, unknown.stderr);
  assert.match(unknown.stderr, /unknown command "stauts"/);
  const json = await runInboxctl(['--json'], {});
  assert.equal(json.code, 2);
  assert.equal(json.json<{ error: { code: string } }>().error.code, 'usage');
});
