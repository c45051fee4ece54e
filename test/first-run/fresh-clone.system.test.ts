/**
 * The README's first commands as a new user runs them, tested the way they once failed: as root,
 * in a fresh clone of the committed HEAD inside a folder only root may enter (`mktemp -d`; /root/app
 * in a dev container), on the machine's own Node (PATH without node_modules/.bin folders: no
 * bootstrap). `npm install` as the README says (offline where the npm cache allows; the packages
 * are the lock file's either way), then the quickstart's "Send it a signed Stripe event" block
 * exactly as README.md has it, pasted
 * twice: the first paste starts `npm start &` with no DATABASE_URL, waits for /readyz and sends the
 * event twice; the second's `npm start` finds PORT taken and says so in one line, and its sends are
 * duplicates of the same bytes: one row, no conflicting duplicate. Then `npx inboxctl` reads the
 * event, a SIGTERM stops the service cleanly, and `npm test` runs the embedded-database tests from
 * the closed checkout.
 * The block runs in a network namespace of its own, so its fixed port 3000 is free (and not someone
 * else's service) whatever else runs on this machine.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runningCluster } from '../../src/db/embedded-address.ts';
import { LOCATION_RECORD } from '../../src/db/embedded-location.ts';
import { repoRoot } from '../cli/run-inboxctl.ts';
import { waitFor } from '../support/wait.ts';

const isRoot = process.getuid?.() === 0;

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs to the end, or is killed (its whole process group) at the deadline. */
function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${options.timeoutMs} ms]`;
      process.kill(-child.pid!, 'SIGKILL');
    }, options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment of a new user's shell: none of this suite's settings, none of the npm variables
 * the outer `npm test` set (npm_config_local_prefix would point npm at this repository), and the
 * PATH without node_modules/.bin folders, so `node` and `npm` are the machine's own.
 */
function newUserEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(npm_|NODE_TEST_CONTEXT$|DATABASE_URL$|TEST_DATABASE_URL$|INBOX_|WEBHOOK_SECRET_|GATEWAY_API_KEY_|PORT$|HOST$|LOG_LEVEL$)/i.test(name)) continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !dir.endsWith(`${path.sep}node_modules${path.sep}.bin`))
    .join(path.delimiter);
  return env;
}

const QUICKSTART_HEADING = '### Send it a signed Stripe event';

/** The first ```sh block under the README's quickstart heading, as written. */
function quickstartBlock(checkout: string): string {
  const file = 'README.md';
  const text = readFileSync(path.join(checkout, file), 'utf8');
  const after = text.slice(text.indexOf(`\n${QUICKSTART_HEADING}\n`));
  const match = /\n```sh\n([\s\S]*?)\n```\n/.exec(after);
  assert.ok(text.includes(`\n${QUICKSTART_HEADING}\n`) && match, `${file} has a "${QUICKSTART_HEADING}" section with a sh block`);
  return match[1]!;
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

const canUnshareNetwork = () => isRoot && spawnSync('unshare', ['--net', 'true']).status === 0;

/**
 * The snippet pasted twice, then what the test checks and the SIGTERM. `$!` after the first paste is
 * its `npm start &`, the service; the second paste's exits at once (PORT taken).
 */
const pastedTwice = (snippet: string) => `${snippet}
service=$!
${snippet}
wait $!
echo "the second npm start exited with $?"
npx inboxctl show stripe evt_1
echo "inboxctl exited with $?"
kill -TERM $service
wait $service
echo "npm start exited with $?"
`;

async function stopLeftoverCluster(app: string): Promise<void> {
  const recordFile = path.join(app, '.inbox', LOCATION_RECORD);
  const home = existsSync(recordFile) ? (JSON.parse(readFileSync(recordFile, 'utf8')) as { home: string }).home : undefined;
  for (const dataDir of [path.join(app, '.inbox', 'pg'), ...(home ? [path.join(home, 'pg')] : [])]) {
    const running = runningCluster(dataDir);
    if (!running) continue;
    process.kill(running.pid, 'SIGQUIT');
    await waitFor(() => !runningCluster(dataDir), { message: 'the leftover cluster to exit', timeoutMs: 30_000, intervalMs: 100 });
  }
  if (home) await rm(home, { recursive: true, force: true });
}

test('a fresh clone in a folder only root may enter: `npm install`, then the quickstart as written, pasted twice: every send 200, one row, no conflicting duplicate, the second npm start one line about PORT; inboxctl reads the event, SIGTERM exits cleanly, `npm test` runs', {
  skip: isRoot
    ? false
    : 'runs only as root: the failure it guards against (the cluster runs as the `postgres` user, who cannot enter the checkout) happens only as root',
  timeout: 20 * 60_000,
}, async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'inbox-fresh-clone-'));
  assert.equal(statSync(dir).mode & 0o777, 0o700, 'mktemp -d: only root may enter');
  const app = path.join(dir, 'app');
  const env = newUserEnv();
  try {
    const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).stdout.trim();
    assert.equal((await run('git', ['clone', '--quiet', repoRoot, app], { cwd: dir, env, timeoutMs: 120_000 })).code, 0);
    assert.equal((await run('git', ['checkout', '--quiet', '--detach', head], { cwd: app, env, timeoutMs: 60_000 })).code, 0);
    const machineNode = spawnSync('node', ['--version'], { env, encoding: 'utf8' }).stdout.trim();
    t.diagnostic(
      `commit ${head.slice(0, 10)}; the machine's node ${machineNode || 'none'}, npm ${spawnSync('npm', ['--version'], { env, encoding: 'utf8' }).stdout.trim()}`,
    );

    const install = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, env, timeoutMs: 10 * 60_000 });
    assert.equal(install.code, 0, `npm install:\n${install.stdout}\n${install.stderr}`);
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: app, encoding: 'utf8' }).stdout;
    assert.equal(status, '', 'npm install leaves the checkout as committed (package-lock.json as npm writes it)');

    const script = path.join(dir, 'snippet.sh');
    await writeFile(script, pastedTwice(quickstartBlock(app)));
    let result: Finished;
    if (canUnshareNetwork()) {
      result = await run('unshare', ['--net', 'bash', '-c', 'ip link set lo up && exec bash "$0"', script], { cwd: app, env, timeoutMs: 5 * 60_000 });
    } else {
      assert.ok(await portIsFree(3000), 'port 3000 is taken and this machine gives no network namespace (unshare --net) to run the README snippet in');
      result = await run('bash', [script], { cwd: app, env, timeoutMs: 5 * 60_000 });
    }
    const output = `${result.stdout}\n${result.stderr}`;
    t.diagnostic(
      result.stdout
        .split('\n')
        .filter((line) => / HTTP \d{3}$|exited with/.test(line))
        .join(' | '),
    );
    assert.match(result.stdout, /\{"status":"ready"\}/, `the snippet waited for /readyz:\n${output}`);
    assert.doesNotMatch(result.stderr, /curl: \(7\)/, output);
    // Counted apart: the service started with `&` writes to the same terminal, and a log line can
    // land between curl's body and its ` HTTP 200` (seen in a CI preflight).
    assert.equal(result.stdout.match(/\{"received":true\}/g)?.length, 4, `four sends, each answered:\n${output}`);
    assert.equal(result.stdout.match(/ HTTP 200$/gm)?.length, 4, `four sends, each 200:\n${output}`);
    assert.doesNotMatch(result.stdout, / HTTP (?!200)\d{3}$/m, `no send answered anything but 200:\n${output}`);
    assert.match(result.stdout, /the second npm start exited with 1/, output);
    assert.match(result.stderr, /^webhook-inbox: PORT 3000 is already in use/m, output);
    assert.doesNotMatch(output, /^\s+at /m, `no stack trace:\n${output}`);
    assert.match(result.stdout, /inboxctl exited with 0/, output);
    // npm runs on the machine's Node, the code on Node 24: npx once warned ten lines a call about the package's own engines.
    assert.doesNotMatch(result.stderr, /EBADENGINE/, `npx and npm start print no engine warnings:\n${result.stderr}`);
    assert.match(result.stdout, /evt_1/, 'inboxctl shows the event the snippet sent');
    assert.match(result.stdout, /conflicting duplicates {2}none/, 'the same bytes again are plain duplicates');
    assert.doesNotMatch(result.stdout, /says something else than the stored event/, output);
    assert.match(result.stdout, /"msg":"stopped cleanly"/, output);
    assert.match(result.stdout, /npm start exited with 0/, output);
    assert.doesNotMatch(output, /Unhandled 'error' event|EACCES/, output);
    assert.ok(existsSync(path.join(app, '.inbox', LOCATION_RECORD)), 'the cluster was moved out of the closed checkout, and the move recorded in .inbox/');
    assert.equal(statSync(dir).mode & 0o777, 0o700, 'the checkout’s folder is still closed: nothing was chmod-ed');

    // npm test on the machine's Node: test/run.ts and what it spawns (process.execPath: the test
    // runner, inboxctl, src/main.ts) run on Node 24. The embedded-database tests, run from this
    // closed checkout, also start clusters whose binaries the `postgres` user cannot reach here.
    const tests = await run('npm', ['test', '--', 'test/db/embedded.system.test.ts'], { cwd: app, env, timeoutMs: 5 * 60_000 });
    assert.equal(tests.code, 0, `npm test:\n${tests.stdout}\n${tests.stderr}`);
    assert.match(tests.stdout, /ℹ fail 0/);
    assert.match(tests.stdout, /ℹ skipped 0/);
    assert.match(tests.stdout, /✔ as root, a checkout the postgres user cannot enter/);
  } finally {
    await stopLeftoverCluster(app).catch((error: unknown) => t.diagnostic(`cleanup: ${String(error)}`));
    await rm(dir, { recursive: true, force: true });
  }
});
