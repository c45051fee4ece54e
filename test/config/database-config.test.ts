import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../src/runtime/load-config.ts';
import { ConfigError } from '../../src/errors.ts';

const load = (env: Record<string, string>) => loadConfig(env, () => '');

test('a direct connection is the default: prepared statements and LISTEN/NOTIFY on, migrations through DATABASE_URL', () => {
  assert.deepEqual(load({ DATABASE_URL: 'postgres://db/inbox' }).database, { preparedStatements: true, listenNotify: true, migrationUrl: undefined });
});

test('behind a transaction pooler: both off, and a direct URL for migrations', () => {
  const config = load({
    DATABASE_URL: 'postgres://pgbouncer:6432/inbox',
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
      assert.deepEqual(error.problems.filter((p) => p.startsWith('DATABASE_')), [
        'DATABASE_PREPARED_STATEMENTS: must be true or false',
        'DATABASE_LISTEN_NOTIFY: must be true or false',
        'DATABASE_MIGRATION_URL: must be a postgres:// or postgresql:// URL',
      ]);
      return true;
    },
  );
  assert.throws(() => load({ DATABASE_MIGRATION_URL: 'postgres://db/inbox' }), /DATABASE_MIGRATION_URL: set only together with DATABASE_URL/);
});
