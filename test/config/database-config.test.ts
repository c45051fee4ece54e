import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { ConfigError } from '../../src/errors.ts';

const load = (env: Record<string, string>) => loadConfig(env, () => '');

test('a direct connection is the default: prepared statements and LISTEN/NOTIFY on, migrations through DATABASE_URL', () => {
  assert.deepEqual(load({ DATABASE_URL: 'postgres://inbox@db/inbox' }).database, { preparedStatements: true, listenNotify: true, migrationUrl: undefined });
});

test('behind a transaction pooler: both off, and a direct URL for migrations', () => {
  const config = load({
    DATABASE_URL: 'postgres://inbox@pgbouncer:6432/inbox',
    DATABASE_PREPARED_STATEMENTS: 'false',
    DATABASE_LISTEN_NOTIFY: 'false',
    DATABASE_MIGRATION_URL: 'postgresql://owner@db:5432/inbox',
  });
  assert.deepEqual(config.database, { preparedStatements: false, listenNotify: false, migrationUrl: 'postgresql://owner@db:5432/inbox' });
});

test('a value that is not true or false, a migration URL that is not a URL, or one without DATABASE_URL: every problem at once', () => {
  assert.throws(
    () => load({ DATABASE_PREPARED_STATEMENTS: 'no', DATABASE_LISTEN_NOTIFY: '0', DATABASE_MIGRATION_URL: 'db:5432' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(
        error.problems.filter((p) => p.startsWith('DATABASE_')),
        [
          'DATABASE_PREPARED_STATEMENTS: must be true or false',
          'DATABASE_LISTEN_NOTIFY: must be true or false',
          'DATABASE_MIGRATION_URL: must be a postgres:// or postgresql:// URL',
        ],
      );
      return true;
    },
  );
  assert.throws(() => load({ DATABASE_MIGRATION_URL: 'postgres://inbox@db/inbox' }), /DATABASE_MIGRATION_URL: set only together with DATABASE_URL/);
});

const databaseUrlProblems = (env: Record<string, string>) => {
  try {
    load(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems.filter((p) => p.startsWith('DATABASE_'));
  }
  return [];
};

test('a DATABASE_URL that names no host, user or database, or whose port is not a port, is refused at parse time with the rest', () => {
  // `postgres://` was accepted, and the drivers filled it in with libpq's defaults: the service
  // migrated the local server's default database before pg-boss refused it.
  assert.deepEqual(databaseUrlProblems({ DATABASE_URL: 'postgres://' }), [
    'DATABASE_URL: names no host (postgres://user@host:5432/database, or ?host=/socket/dir for a unix socket)',
    'DATABASE_URL: names no user (postgres://user@host:5432/database)',
    'DATABASE_URL: names no database (postgres://user@host:5432/database)',
  ]);
  for (const url of ['postgres://127.0.0.1:99999/test', 'postgres://h:abc/db']) {
    assert.deepEqual(
      databaseUrlProblems({ DATABASE_URL: url }),
      ['DATABASE_URL: cannot be read as a URL: check the port (1–65535) and percent-encode any of : / @ ? # % in the user name and password'],
      url,
    );
  }
  assert.deepEqual(databaseUrlProblems({ DATABASE_URL: 'postgres://u@h:0/db' }), ['DATABASE_URL: port 0 is not a port PostgreSQL can listen on (1–65535)']);
  assert.deepEqual(databaseUrlProblems({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/test?sslmode=bogus' }), [
    'DATABASE_URL: sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full, no-verify',
  ]);
  assert.deepEqual(databaseUrlProblems({ DATABASE_URL: 'postgres://inbox@db/inbox', DATABASE_MIGRATION_URL: 'postgres://owner@db/' }), [
    'DATABASE_MIGRATION_URL: names no database (postgres://user@host:5432/database)',
  ]);
});

test('what a URL must name, it may name the libpq ways: a unix socket in ?host=, a password, IPv6, any sslmode libpq knows', () => {
  for (const url of [
    'postgres://inbox@localhost:5432/inbox?host=/run/postgresql',
    'postgresql://inbox:p%40ss@db.internal/inbox?sslmode=verify-full',
    'postgres://inbox@[::1]:5432/inbox?sslmode=disable',
  ]) {
    assert.deepEqual(databaseUrlProblems({ DATABASE_URL: url }), [], url);
  }
});

test('a refused URL is never echoed: its password stays out of the problem list', () => {
  const problems = databaseUrlProblems({ DATABASE_URL: 'postgres://inbox:hunter2secret@db:99999/inbox' });
  assert.equal(problems.length, 1);
  assert.doesNotMatch(problems.join('\n'), /hunter2secret/);
});
