/**
 * A DATABASE_URL that is wrong, or names a database that is not there, as an operator meets it:
 * the service started as a process. Each once answered with a raw stack (TypeError: Invalid URL
 * from the socket-URL reader, ECONNREFUSED, ENOTFOUND, "database does not exist", a TLS reset).
 * inboxctl with the same URLs (exit 2 and 3) is database-at-start.test.ts, in the fast tier.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot } from '../cli/run-inboxctl.ts';
import { adminDatabaseUrl, databaseUrl } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

let scratch: string;
before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-database-at-start-'));
});
after(async () => {
  await rm(scratch, { recursive: true, force: true });
});

function startService(settings: Record<string, string>, port: number): Promise<Exited> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/main.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', WEBHOOK_SECRET_STRIPE: 'whsec_x', PORT: String(port), INBOX_DATA_DIR: scratch, ...settings },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // A service that started after all would run until killed: the test fails instead of hanging.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const STACK_FRAME = /^\s+at /m;

/** In the URLs of servers that never see it (the test server's own password is `postgres`, a word its messages say anyway). */
const PASSWORD = 's3cret-canary';

test('a URL the config cannot read is a configuration problem: the service lists it and exits 1 without touching a database', async () => {
  const port = await freePort();
  for (const url of ['postgres://', 'postgres://127.0.0.1:99999/test', 'postgres://h:abc/db', 'postgres://u@127.0.0.1:5432/test?sslmode=bogus']) {
    const service = await startService({ DATABASE_URL: url }, port);
    assert.equal(service.code, 1, `${url}: ${service.stderr}`);
    assert.match(service.stderr, /^Invalid configuration:\n {2}- DATABASE_URL: /, url);
    assert.doesNotMatch(service.stderr, STACK_FRAME, url);
    assert.doesNotMatch(service.stdout, /migrat/i, url);
  }
});

test('a database that cannot be reached at start: one readable line naming host:port/database and the reason, no stack, no password, exit 1', async () => {
  const admin = adminDatabaseUrl();
  const { host } = new URL(admin);
  const closedPort = await freePort();
  const cases = [
    { url: `postgres://postgres:${PASSWORD}@127.0.0.1:${closedPort}/test`, target: `127.0.0.1:${closedPort}/test`, reason: /ECONNREFUSED/ },
    { url: `postgres://postgres:${PASSWORD}@nosuchhost.invalid:5432/test`, target: 'nosuchhost.invalid:5432/test', reason: /ENOTFOUND|EAI_AGAIN/ },
    { url: databaseUrl(admin, 'inbox_no_such_database'), target: `${host}/inbox_no_such_database`, reason: /database "inbox_no_such_database" does not exist/ },
    // The test server speaks no TLS: sslmode=require is refused during the handshake.
    { url: `${databaseUrl(admin, 'postgres')}?sslmode=require`, target: `${host}/postgres`, reason: /TLS|SSL|ECONNRESET/i },
  ];
  for (const { url, target, reason } of cases) {
    const service = await startService({ DATABASE_URL: url }, await freePort());
    assert.notEqual(service.code, 0, url);
    assert.doesNotMatch(service.stderr, STACK_FRAME, `${url}: ${service.stderr}`);
    const lines = service.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `${url}: ${service.stderr}`);
    assert.ok(lines[0]!.startsWith(`webhook-inbox: cannot reach the database at ${target} (DATABASE_URL): `), `${url}: ${lines[0]}`);
    assert.match(lines[0]!, reason, url);
    assert.ok(!service.stderr.includes(PASSWORD) && !service.stdout.includes(PASSWORD), 'the password is never printed');
  }
});

test('no DATABASE_URL and an INBOX_DATA_DIR where no folder can be made (/proc): one line naming the folder, exit 1', async () => {
  // Node's mkdir(…, { recursive: true }) never returns there: the service once spun a core until killed.
  const service = await startService({ INBOX_DATA_DIR: '/proc/inbox-data' }, await freePort());
  assert.equal(service.code, 1, service.stderr);
  assert.equal(
    service.stderr.trim(),
    "webhook-inbox: Cannot make /proc/inbox-data, the embedded PostgreSQL's folder (INBOX_DATA_DIR): ENOENT. Point INBOX_DATA_DIR at a folder this user can create, or set DATABASE_URL.",
  );
});
