import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { freePort } from '../support/free-port.ts';
import { setup } from '../support/setup.ts';
import { type InboxctlRun, runInboxctl } from './run-inboxctl.ts';

// Found by reading the commands against a script's use of --json: every refusal (a bad value, an
// unknown option, a refused purge, an unreachable database, a run stopped part-way) printed
// nothing on stdout, only a line for people on stderr, so `inboxctl … --json | jq` got nothing to
// parse and a script had to scrape stderr for the reason.

const database = useTestDatabase();
let scratch: string;
let env: Record<string, string>;
let backfillEnv: Record<string, string>;
const unreachable = { DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:9/inbox', WEBHOOK_SECRET_STRIPE: 'whsec_json_errors' };

setup(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'inboxctl-json-errors-'));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_json_errors', INBOX_ARCHIVE_DIR: path.join(scratch, 'archive') };
  // Nothing listens at the gateway's address: the backfill's first page fails before an answer.
  const config = path.join(scratch, 'inbox.json');
  await writeFile(config, JSON.stringify({ providers: { stripe: { driver: 'stripe', api: { baseUrl: `http://127.0.0.1:${await freePort()}` } } } }));
  backfillEnv = { ...env, GATEWAY_API_KEY_STRIPE: 'sk_test_json_errors', INBOX_CONFIG: config };
});

after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** stdout holds one JSON object, the error; stderr still holds the line for people, with the same message. */
function jsonError(run: InboxctlRun, exitCode: number, code: string) {
  assert.equal(run.code, exitCode, run.stderr);
  let parsed: { error: { code: string; exitCode: number; message: string } };
  assert.doesNotThrow(() => (parsed = run.json()), `stdout is JSON: ${JSON.stringify(run.out)}`);
  const { error } = parsed!;
  assert.equal(error.code, code, run.out);
  assert.equal(error.exitCode, exitCode);
  assert.equal(`inboxctl: ${error.message}\n`, run.stderr, 'the same message as on stderr');
  return parsed!;
}

describe('--json: a command that refuses prints its error as JSON on stdout, exit code unchanged', () => {
  const usage: Array<[args: string[], says: RegExp]> = [
    [['stats', '--since', '-5h', '--json'], /--since: "-5h" is negative/],
    [['stats', '--bogus', '--json'], /Unknown option `--bogus`/],
    [['replay', 'stripe', '--since', '--json'], /value is missing/],
    [['show', '--json'], /missing required args/],
    [['show', 'stripe', 'evt_1', '--raw', '--json'], /--raw and --json exclude each other/],
    [['nosuch', '--json'], /unknown command "nosuch"/],
    [['--json'], /no command/],
    [['restore', '/nonexistent/stripe-2026-01-05.jsonl.gz', '--json'], /no such file/],
    [['lanes', 'enable', '--json'], /needs a destination/],
  ];
  for (const [args, says] of usage) {
    test(`inboxctl ${args.join(' ')}: exit 2, {"error": {"code": "usage", …}}`, async () => {
      const { error } = jsonError(await runInboxctl(args, unreachable), 2, 'usage');
      assert.match(error.message, says);
    });
  }

  test('a bad configuration: exit 2, code config_invalid, every problem listed', async () => {
    const run = await runInboxctl(['stats', '--json'], { ...unreachable, INBOX_CONFIG: '{not json', WORKER_MAX_ATTEMPTS: 'many' });
    assert.equal(run.code, 2, run.stderr);
    const { error } = run.json();
    assert.equal(error.code, 'config_invalid');
    assert.equal(error.exitCode, 2);
    assert.equal(error.problems.length, 2, run.out);
    assert.ok(
      error.problems.some((p: string) => p.startsWith('INBOX_CONFIG')),
      run.out,
    );
    assert.ok(
      error.problems.some((p: string) => p.startsWith('WORKER_MAX_ATTEMPTS')),
      run.out,
    );
  });

  test("a purge refused inside the dedupe window: exit 2, the refusal's own code", async () => {
    const { error } = jsonError(await runInboxctl(['purge', '--older-than', '1d', '--provider', 'stripe', '--json'], env), 2, 'inside_dedupe_window');
    assert.match(error.message, /^refused, nothing changed: /);
  });

  test('a provider the inbox does not know: exit 2 after connecting', async () => {
    jsonError(await runInboxctl(['replay', 'zoop', '--json'], env), 2, 'usage');
  });

  test('the database unreachable: exit 3, code database_unavailable', async () => {
    for (const args of [
      ['stats', '--json'],
      ['replay', 'stripe', '--dry-run', '--json'],
      ['purge', '--older-than', '90d', '--json'],
    ]) {
      const { error } = jsonError(await runInboxctl(args, unreachable), 3, 'database_unavailable');
      assert.match(error.message, /^cannot reach the database at 127\.0\.0\.1:9\/inbox: /);
    }
  });

  test('a backfill stopped by its gateway: exit 4, code operation_incomplete', async () => {
    const { error } = jsonError(await runInboxctl(['backfill', 'stripe', '--since', '72h', '--json'], backfillEnv), 4, 'operation_incomplete');
    assert.match(error.message, /GatewayUnavailableError/);
  });
});

describe('--json: what is not an error stays as it was', () => {
  test('exit 1 is an answer: show of no such event prints null', async () => {
    const run = await runInboxctl(['show', 'stripe', 'evt_none', '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.json(), null);
  });

  test('without --json an error leaves stdout empty', async () => {
    const run = await runInboxctl(['stats', '--since', '-5h'], unreachable);
    assert.equal(run.code, 2);
    assert.equal(run.out, '');
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
  });
});
