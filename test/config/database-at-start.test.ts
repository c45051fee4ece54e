/**
 * inboxctl given a DATABASE_URL that is wrong, or names a database that is not there: exit 2 for
 * a URL the configuration cannot read, exit 3 with one readable line for a database it cannot
 * reach. (It once answered with a raw stack, and with exit 4 where the README promises 2.) The
 * service's own start with the same URLs, as a process, is database-at-start.system.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { adminDatabaseUrl, databaseUrl } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';

const STACK_FRAME = /^\s+at /m;

/** In the URLs of servers that never see it (the test server's own password is `postgres`, a word its messages say anyway). */
const PASSWORD = 's3cret-canary';

test('a URL the config cannot read is a configuration problem: inboxctl exits 2 without touching a database', async () => {
  for (const url of ['postgres://', 'postgres://127.0.0.1:99999/test', 'postgres://h:abc/db', 'postgres://u@127.0.0.1:5432/test?sslmode=bogus']) {
    const cli = await runInboxctl(['stats'], { DATABASE_URL: url, WEBHOOK_SECRET_STRIPE: 'whsec_x' });
    assert.equal(cli.code, 2, `${url}: ${cli.stderr}`);
    assert.match(cli.stderr, /DATABASE_URL: /, url);
    assert.doesNotMatch(cli.stderr, /TypeError|Invalid URL/, url);
  }
});

test('a database that cannot be reached: inboxctl exits 3 with one line naming host:port/database and the reason, no stack, no password', async () => {
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
    const cli = await runInboxctl(['stats'], { DATABASE_URL: url, WEBHOOK_SECRET_STRIPE: 'whsec_x' });
    assert.equal(cli.code, 3, `${url}: ${cli.stderr}`);
    assert.ok(cli.stderr.startsWith(`inboxctl: cannot reach the database at ${target}: `), `${url}: ${cli.stderr}`);
    assert.match(cli.stderr, reason, url);
    assert.doesNotMatch(cli.stderr, STACK_FRAME, url);
    assert.ok(!cli.stderr.includes(PASSWORD), 'the password is never printed');
  }
});
