/**
 * The embedded PostgreSQL as checkouts use it: one cluster per checkout's data folder, on a port it
 * picks, found again through its own postmaster.pid, and never mistaken for another checkout's.
 * Each cluster here is a real one (initdb, pg_ctl), in folders of this test's own.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { freePort } from '../support/free-port.ts';
import { EmbeddedDatabaseError } from '../../src/db/embedded-error.ts';
import { LOCATION_RECORD } from '../../src/db/embedded-location.ts';
import { clusterUser, runClusterCommand } from '../../src/db/embedded-process.ts';
import { type EmbeddedDatabase, startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { repoRoot, runInboxctl } from '../cli/run-inboxctl.ts';
import { insertInboxRows } from '../operations/harness.ts';
import { prepareTemplate } from '../support/template.ts';

const isRoot = process.getuid?.() === 0;
let scratch: string;
const started: EmbeddedDatabase[] = [];

async function checkoutFolder(name: string): Promise<string> {
  const dir = path.join(scratch, name);
  await mkdir(dir, { recursive: true });
  return path.join(dir, '.inbox');
}

async function start(baseDir: string, preferredPort: number): Promise<EmbeddedDatabase> {
  const database = await startEmbeddedPostgres({ baseDir, preferredPort, relocationDir: path.join(scratch, 'relocated') });
  started.push(database);
  return database;
}

/** The inbox schema plus one event only this checkout has. */
async function seed(url: string, eventId: string): Promise<void> {
  await applyMigrations(url);
  await prepareTemplate(url);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await insertInboxRows(sql, [{ eventId, receivedAt: new Date() }]);
  } finally {
    await sql.end();
  }
}

const inboxctlIn = (baseDir: string, args: string[]) => runInboxctl(args, { INBOX_DATA_DIR: baseDir, WEBHOOK_SECRET_STRIPE: 'whsec_embedded_test' });

before(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-embedded-test-'));
  // As root the clusters run as `postgres`, who must be able to enter the folders of this test.
  await chmod(scratch, 0o755);
});

after(async () => {
  for (const database of started) await database.stop().catch(() => {});
  await rm(scratch, { recursive: true, force: true });
});

describe('two checkouts side by side', () => {
  let a: EmbeddedDatabase;
  let b: EmbeddedDatabase;
  let baseA: string;
  let baseB: string;
  let preferred: number;

  before(async () => {
    baseA = await checkoutFolder('checkout-a');
    baseB = await checkoutFolder('checkout-b');
    preferred = await freePort();
    a = await start(baseA, preferred);
    b = await start(baseB, preferred);
    await seed(a.url, 'evt_only_in_a');
    await seed(b.url, 'evt_only_in_b');
  });

  test('the second checkout starts on another port when the first holds the preferred one', () => {
    assert.equal(a.port, preferred);
    assert.notEqual(b.port, preferred);
    assert.ok(a.startedHere && b.startedHere);
  });

  test('inboxctl in each checkout reads its own database, found through its postmaster.pid', async () => {
    const inA = await inboxctlIn(baseA, ['show', 'stripe', 'evt_only_in_a', '--json']);
    assert.equal(inA.code, 0, inA.stderr);
    assert.match(inA.out, /evt_only_in_a/);
    const otherFromA = await inboxctlIn(baseA, ['show', 'stripe', 'evt_only_in_b']);
    assert.equal(otherFromA.code, 1, 'checkout A does not see B’s event');
    const inB = await inboxctlIn(baseB, ['show', 'stripe', 'evt_only_in_b']);
    assert.equal(inB.code, 0, inB.stderr);
    assert.equal((await inboxctlIn(baseB, ['show', 'stripe', 'evt_only_in_a'])).code, 1, 'checkout B does not see A’s event');
  });

  test('a second start of a checkout whose cluster is already running reuses it and leaves it running', async () => {
    const again = await start(baseA, 0);
    assert.equal(again.startedHere, false);
    assert.equal(again.port, a.port);
    await again.stop();
    const sql = postgres(a.url, { max: 1, onnotice: () => {} });
    try {
      assert.equal((await sql`select 1 as one`)[0]!.one, 1, 'the cluster still answers: only the start that started it stops it');
    } finally {
      await sql.end();
    }
  });

  test('with its own cluster stopped, inboxctl in B starts B’s cluster for the command instead of reading A’s on the old port', async () => {
    await b.stop();
    const run = await inboxctlIn(baseB, ['show', 'stripe', 'evt_only_in_b']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /starting the embedded PostgreSQL in .*checkout-b.* for this command/);
    // Found by a probe: it said "(the service is not running)", but the service may be up with only
    // its cluster stopped; what inboxctl knows is that no cluster runs on that data directory.
    assert.match(run.stderr, /for this command \(no embedded cluster is running on it\)/);
    assert.equal(existsSync(path.join(b.dataDir, 'postmaster.pid')), false, 'and stops it after the command');
  });

  test('a postmaster.pid that leads to another checkout’s cluster is refused: exit 3, nothing read', async () => {
    const forged = path.join(b.dataDir, 'postmaster.pid');
    await copyFile(path.join(a.dataDir, 'postmaster.pid'), forged);
    try {
      const run = await inboxctlIn(baseB, ['show', 'stripe', 'evt_only_in_a']);
      assert.equal(run.code, 3, run.stderr);
      assert.match(run.stderr, new RegExp(`serves ${a.dataDir}, not this checkout's ${b.dataDir}`));
      assert.equal(run.out, '');
    } finally {
      await rm(forged, { force: true });
    }
  });
});

describe('as root, a checkout the postgres user cannot enter', {
  skip: isRoot ? false : 'runs only as root: a non-root user runs the cluster as itself',
}, () => {
  test('the cluster runs from a folder that user can reach, recorded in the checkout; the checkout stays closed; inboxctl finds it', async () => {
    const closed = path.join(scratch, 'closed');
    await mkdir(closed);
    await chmod(closed, 0o700);
    const baseDir = path.join(closed, 'app', '.inbox');
    const database = await start(baseDir, 0);
    const relocated = path.join(scratch, 'relocated');
    assert.ok(database.relocatedTo?.startsWith(`${relocated}/app-`), `relocated to ${database.relocatedTo}`);
    assert.equal(database.dataDir, path.join(database.relocatedTo!, 'pg'));
    const record = JSON.parse(readFileSync(path.join(baseDir, LOCATION_RECORD), 'utf8'));
    assert.equal(record.home, database.relocatedTo);
    assert.equal(readFileSync(path.join(database.relocatedTo!, 'owner.txt'), 'utf8').trim(), baseDir);
    assert.equal(statSync(closed).mode & 0o777, 0o700, 'the checkout’s permissions are not changed');
    await seed(database.url, 'evt_in_closed_checkout');
    const run = await inboxctlIn(baseDir, ['show', 'stripe', 'evt_in_closed_checkout']);
    assert.equal(run.code, 0, run.stderr);
  });

  test('stopped and started again, the relocated cluster comes back from the same folder with its data', async () => {
    const closed = path.join(scratch, 'closed-restart');
    await mkdir(closed);
    await chmod(closed, 0o700);
    const baseDir = path.join(closed, 'app', '.inbox');
    const first = await start(baseDir, 0);
    await seed(first.url, 'evt_before_restart');
    await first.stop();
    const second = await start(baseDir, 0);
    assert.equal(second.relocatedTo, first.relocatedTo, 'the folder recorded in the checkout is used again');
    const sql = postgres(second.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql`select event_id from webhook_inbox where event_id = 'evt_before_restart'`;
      assert.equal(rows.length, 1, 'the row written before the restart is there');
    } finally {
      await sql.end();
    }
  });
});

describe('failures are readable', () => {
  test('a program that cannot be run is an EmbeddedDatabaseError naming it, not an unhandled spawn error', async () => {
    const user = await clusterUser();
    await assert.rejects(runClusterCommand('/nonexistent/bin/initdb', [], user, 'test'), (error: unknown) => {
      assert.ok(error instanceof EmbeddedDatabaseError);
      assert.match(error.message, /Cannot run \/nonexistent\/bin\/initdb as .*ENOENT/);
      return true;
    });
  });

  test('as root, a program inside a folder the postgres user cannot enter fails with EACCES, explained', {
    skip: isRoot ? false : 'runs only as root',
  }, async () => {
    const closed = path.join(scratch, 'closed-bin');
    await mkdir(closed);
    await chmod(closed, 0o700);
    const program = path.join(closed, 'initdb');
    await writeFile(program, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    await assert.rejects(
      runClusterCommand(program, [], await clusterUser(), 'test'),
      /Cannot run .*closed-bin\/initdb as the `postgres` OS user: EACCES \(it cannot reach or execute the file\)/,
    );
  });

  test('npm start on a data folder whose cluster cannot start: exit 1 and one message with PostgreSQL’s reason, no stack', async () => {
    const baseDir = await checkoutFolder('broken');
    const dataDir = path.join(baseDir, 'pg');
    await mkdir(dataDir, { recursive: true });
    // Looks initialised to us; PostgreSQL knows better.
    await writeFile(path.join(dataDir, 'PG_VERSION'), '9.6\n');
    const user = await clusterUser();
    if (user) await chown(dataDir, user.uid, user.gid);
    await chmod(dataDir, 0o700);
    const result = spawnSync(process.execPath, ['src/main.ts'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, INBOX_DATA_DIR: baseDir, PORT: '0', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /webhook-inbox: The embedded PostgreSQL in .*broken\/\.inbox\/pg did not start/);
    assert.match(result.stderr, /could not access the server configuration file/, 'PostgreSQL’s own reason is shown');
    assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace');
  });
});
