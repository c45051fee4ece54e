/**
 * A PORT another process holds, as an operator meets it: `npm start` pasted twice, or a second
 * service on the same machine. The service says so in one line naming PORT and exits non-zero
 * before it touches the database or starts a worker (it once started the workers, logged
 * "processing webhooks", then died with a stack).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { freePort } from '../support/free-port.ts';
import { runServiceUntilExit } from '../support/service-process.ts';

const database = useTestDatabase();
let holder: Server;
let port: number;
let scratch: string;

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-port-in-use-'));
  port = await freePort();
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
});
after(async () => {
  await new Promise((resolve) => holder.close(resolve));
  await rm(scratch, { recursive: true, force: true });
});

const STACK_FRAME = /^\s+at /m;

test('a PORT in use: one line on stderr naming PORT and the port, exit 1, no worker started, no database touched', async () => {
  const pgbossBefore =
    await database.sql`select count(*)::int as n from pg_stat_activity where datname = ${database.name} and application_name like 'webhook-inbox%'`;
  assert.equal(pgbossBefore[0]!.n, 0);
  const exited = await runServiceUntilExit({ DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', WEBHOOK_SECRET_STRIPE: 'whsec_x' });
  assert.equal(exited.code, 1, exited.stderr);
  const lines = exited.stderr.trim().split('\n');
  assert.equal(lines.length, 1, exited.stderr);
  assert.match(lines[0]!, new RegExp(`PORT ${port}`));
  assert.match(lines[0]!, /in use/);
  assert.doesNotMatch(exited.stderr, STACK_FRAME);
  assert.doesNotMatch(exited.stdout, /processing webhooks|receiving webhooks|migrat/, exited.stdout);
});

test('a PORT in use without DATABASE_URL: the same line, and no embedded PostgreSQL is started for nothing', async () => {
  const exited = await runServiceUntilExit({ PORT: String(port), HOST: '127.0.0.1', INBOX_DATA_DIR: scratch, WEBHOOK_SECRET_STRIPE: 'whsec_x' });
  assert.equal(exited.code, 1, exited.stderr);
  assert.match(exited.stderr.trim(), new RegExp(`^webhook-inbox: PORT ${port} .*in use`));
  assert.equal(exited.stderr.trim().split('\n').length, 1, exited.stderr);
  assert.ok(!existsSync(path.join(scratch, 'pg')), 'no cluster was initialised');
  assert.doesNotMatch(exited.stdout, /EMBEDDED PostgreSQL/);
});

test('the service reads the env file (INBOX_ENV_FILE) as inboxctl does: a PORT written there is the one it takes', async () => {
  const file = path.join(scratch, 'inbox.env');
  await writeFile(file, `PORT=${port}\nHOST=127.0.0.1\nWEBHOOK_SECRET_STRIPE=whsec_x\n`);
  const exited = await runServiceUntilExit({ INBOX_ENV_FILE: file, DATABASE_URL: database.url });
  assert.equal(exited.code, 1, exited.stderr);
  assert.match(exited.stderr, new RegExp(`PORT ${port} is already in use on 127\\.0\\.0\\.1`));
});
