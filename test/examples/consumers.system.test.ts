/**
 * The runnable consumers of docs/consuming.md, run as a reader would, against the real service:
 * the push consumer (examples/push-consumer) with `npm start` on the machine's own Node (20 here)
 * and on Node 24, and as `node consumer.ts` on Node 24; the feed consumer
 * (examples/feed-consumer/feed-consumer.sh) with bash, curl and jq. The docs show the same code:
 * a test below holds each block equal to its file.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { repoRoot } from '../cli/run-inboxctl.ts';
import { useTestDatabase } from '../support/database.ts';
import { freePort } from '../support/free-port.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const STRIPE_SECRET = 'whsec_examples_stripe';
const DESTINATION_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const API_TOKEN = 'examples-api-token-0123456789abcdef0123';

/** A directory of PATH without node_modules/.bin: the machine's own `node` and `npm`, as a reader's shell has them. */
const machinePath = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.endsWith(`${path.sep}node_modules${path.sep}.bin`));

function machineNode(): { dir: string; version: string } | undefined {
  const dir = machinePath.find((d) => existsSync(path.join(d, 'node')) && !d.startsWith(repoRoot));
  if (!dir) return undefined;
  return { dir, version: spawnSync(path.join(dir, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim() };
}
const node24Dir = path.dirname(process.execPath);

const database = useTestDatabase();
let service: TestService;
let consumerPort: number;
let scratch: string;

setup(async () => {
  consumerPort = await freePort();
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-examples-'));
  service = await startTestService({
    database,
    env: {
      WEBHOOK_SECRET_STRIPE: STRIPE_SECRET,
      DESTINATION_URL_SHOP: `http://127.0.0.1:${consumerPort}/`,
      DESTINATION_SECRET_SHOP: DESTINATION_SECRET,
      INBOX_API_TOKEN: API_TOKEN,
    },
  });
});
after(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Started in a process group of its own, so stopping it also stops what a script started (curl, sleep, tsx's node). */
function start(command: string, args: string[], options: { cwd: string; env: Record<string, string> }): Running {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
      await closed;
    },
  };
}

/**
 * The example as a reader has it after `npm install` in its folder, outside this repository (whose
 * node_modules/.bin would put Node 24 first on npm's PATH): a copy whose node_modules links the
 * two packages its package.json names to this repository's copies.
 */
async function installedPushConsumer(): Promise<string> {
  const dir = path.join(scratch, 'push-consumer');
  if (existsSync(dir)) return dir;
  await cp(path.join(repoRoot, 'examples/push-consumer'), dir, { recursive: true });
  await mkdir(path.join(dir, 'node_modules/.bin'), { recursive: true });
  for (const name of ['standardwebhooks', 'tsx']) await symlink(path.join(repoRoot, 'node_modules', name), path.join(dir, 'node_modules', name));
  await symlink('../tsx/dist/cli.mjs', path.join(dir, 'node_modules/.bin/tsx'));
  return dir;
}

async function pushTwoEventsThrough(run: Running, chargeId: string): Promise<void> {
  try {
    await waitFor(() => /listening on :\d+/.test(run.output()), { message: 'the consumer to listen', timeoutMs: 30_000 }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${run.output()}`);
    });
    const created = Math.floor(Date.now() / 1000);
    assert.equal(
      (await postStripe(service.baseUrl, chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created }), STRIPE_SECRET)).status,
      200,
    );
    assert.equal(
      (
        await postStripe(
          service.baseUrl,
          chargeEvent({ id: `evt_${chargeId}_refunded`, type: 'charge.refunded', chargeId, created: created + 1, amountRefunded: 2000 }),
          STRIPE_SECRET,
        )
      ).status,
      200,
    );
    await waitFor(() => run.output().includes(`stripe:${chargeId}: paid → refunded, 2000 refunded`), {
      message: 'the consumer to apply both events',
      timeoutMs: 30_000,
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${run.output()}`);
    });
    assert.match(run.output(), new RegExp(`stripe:${chargeId}: ∅ → paid, 0 refunded\\n`));
  } finally {
    await run.stop();
  }
}

const consumerEnv = (nodeDir: string) => ({
  PATH: [nodeDir, ...machinePath].join(path.delimiter),
  HOME: scratch,
  PORT: String(consumerPort),
  INBOX_WEBHOOK_SECRET: DESTINATION_SECRET,
});
const machine = machineNode();
const machineSkip = !machine
  ? 'no node on the PATH outside node_modules'
  : Number(/^v(\d+)/.exec(machine.version)?.[1]) < 20
    ? `the machine's Node is ${machine.version}; the example names Node ≥ 20`
    : false;

describe('the push consumer (examples/push-consumer)', () => {
  test(`\`npm start\` on the machine's Node (${machine?.version ?? 'none'}): tsx runs it, it verifies and applies a payment's events in order`, {
    skip: machineSkip,
  }, async () => {
    const run = start('npm', ['start'], { cwd: await installedPushConsumer(), env: consumerEnv(machine!.dir) });
    await pushTwoEventsThrough(run, 'ch_example_machine');
    assert.match(run.output(), new RegExp(`\\(Node ${machine!.version.replaceAll('.', '\\.')}\\)`), 'it ran on the machine’s Node');
  });

  test('`npm start` on Node 24', async () => {
    const run = start('npm', ['start'], { cwd: await installedPushConsumer(), env: consumerEnv(node24Dir) });
    await pushTwoEventsThrough(run, 'ch_example_npm24');
    assert.match(run.output(), /\(Node v24\./);
  });

  test('`node consumer.ts` on Node 24 (type stripping, no tsx)', async () => {
    const run = start('node', ['consumer.ts'], { cwd: await installedPushConsumer(), env: consumerEnv(node24Dir) });
    await pushTwoEventsThrough(run, 'ch_example_node24');
    assert.match(run.output(), /\(Node v24\./);
  });
});

const hasJq = spawnSync('jq', ['--version']).status === 0;

test('the feed consumer (examples/feed-consumer/feed-consumer.sh): one command, every event applied by sequence', {
  skip: hasJq ? false : 'jq is not installed',
}, async () => {
  const cwd = await mkdtemp(path.join(scratch, 'feed-'));
  const run = start('bash', [path.join(repoRoot, 'examples/feed-consumer/feed-consumer.sh')], {
    cwd,
    env: { PATH: machinePath.join(path.delimiter), HOME: scratch, INBOX_URL: service.baseUrl, INBOX_API_TOKEN: API_TOKEN },
  });
  try {
    const created = Math.floor(Date.now() / 1000);
    assert.equal(
      (await postStripe(service.baseUrl, chargeEvent({ id: 'evt_feed_paid', type: 'charge.succeeded', chargeId: 'ch_example_feed', created }), STRIPE_SECRET))
        .status,
      200,
    );
    await waitFor(() => run.output().includes('{"charge":"ch_example_feed","status":"paid","refunded":0,"seq":1}'), {
      message: 'the feed consumer to apply the event',
      timeoutMs: 30_000,
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${run.output()}`);
    });
    // The cursor is written once the page is applied, just after the line above.
    await waitFor(() => existsSync(path.join(cwd, 'state/cursor')), { message: 'the feed consumer to store its cursor', timeoutMs: 10_000 });
  } finally {
    await run.stop();
  }
});

/** The first fenced block after `marker` in docs/consuming.md. */
function docsBlock(marker: string, fence: string): string {
  const docs = readFileSync(path.join(repoRoot, 'docs/consuming.md'), 'utf8');
  const at = docs.indexOf(marker);
  assert.ok(at >= 0, `docs/consuming.md says "${marker}"`);
  const match = new RegExp(`\\n\`\`\`${fence}\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(docs.slice(at));
  assert.ok(match, `a ${fence} block follows "${marker}"`);
  return `${match[1]}\n`;
}

test('docs/consuming.md shows each consumer exactly as its file in examples/ has it', () => {
  assert.equal(docsBlock('**A consumer in TypeScript**', 'ts'), readFileSync(path.join(repoRoot, 'examples/push-consumer/consumer.ts'), 'utf8'));
  assert.equal(
    docsBlock('A complete consumer with `curl` and `jq`', 'sh'),
    readFileSync(path.join(repoRoot, 'examples/feed-consumer/feed-consumer.sh'), 'utf8'),
  );
});
