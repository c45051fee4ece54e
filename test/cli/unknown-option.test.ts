import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runInboxctl } from './run-inboxctl.ts';

// Found by a probe: cac reports an unknown option by the camelCase key mri made of it, so
// `stats --foo-bar` answered "Unknown option `--fooBar`", an option nobody typed. No database is
// needed: the command line is refused before anything connects.

const env = { DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:9/inbox', WEBHOOK_SECRET_STRIPE: 'whsec_unknown_option' };

describe('an unknown option', () => {
  const cases: Array<[args: string[], typed: string]> = [
    [['stats', '--foo-bar'], '--foo-bar'],
    [['stats', '--foo-bar=1'], '--foo-bar'],
    // Declared by other commands (so put in camelCase before cac sees it), but not by these.
    [['stats', '--dry-run'], '--dry-run'],
    [['show', 'stripe', 'evt_1', '--older-than', '5m'], '--older-than'],
    [['stats', '-x'], '-x'],
  ];
  for (const [args, typed] of cases) {
    test(`inboxctl ${args.join(' ')}: exit 2, one line naming ${typed} as typed`, async () => {
      const run = await runInboxctl(args, env);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
      assert.ok(run.stderr.includes(`Unknown option \`${typed}\``), run.stderr);
      assert.equal(run.out, '');
    });
  }
});
