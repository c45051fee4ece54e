import { randomBytes } from 'node:crypto';
import { after, afterEach } from 'node:test';
import postgres from 'postgres';
import { type DatabaseHandle, connectDatabase } from '../../src/db/client.ts';
import { adminDatabaseUrl, databaseUrl, templateDatabase } from './env.ts';
import { setup } from './setup.ts';

export interface TestDatabase {
  url: string;
  name: string;
  /** A plain postgres.js client for assertions (not the one the code under test uses). */
  sql: postgres.Sql;
  /**
   * Runs `close` in the file's `after`, last registered first, before the database is dropped:
   * node:test runs `after` hooks in the order they were registered, so a service or pool a test
   * opens must be closed through here, not by an `after` of its own.
   */
  onTeardown(close: () => Promise<unknown> | void): void;
  /** The application's own pool (src/db/client.ts) on this database, closed at teardown. */
  connect(applicationName: string, poolSize?: number): DatabaseHandle;
}

/**
 * One database per test file, cloned from the template test/run.ts migrated once (ours and
 * pg-boss's schema), so a file starts clean in milliseconds. Registers the file's hooks: the
 * handle's fields are filled in a `setup` (test/support/setup.ts: later setup steps may use them); `after` closes what was registered with `onTeardown`
 * and drops the database, unless a test failed: then it is kept, and its name printed, so the
 * rows the failure left behind can be read.
 */
export function useTestDatabase(): TestDatabase {
  const teardown: Array<() => Promise<unknown> | void> = [];
  let created: CreatedDatabase | undefined;
  let failed = false;
  const handle: TestDatabase = {
    url: '',
    name: '',
    sql: undefined as unknown as postgres.Sql,
    onTeardown: (close) => void teardown.push(close),
    connect(applicationName, poolSize = 2) {
      const pool = connectDatabase({ url: handle.url, poolSize, connectTimeoutSeconds: 5, applicationName });
      teardown.push(() => pool.close());
      return pool;
    },
  };
  setup(async () => {
    created = await createDatabase();
    Object.assign(handle, { url: created.url, name: created.name, sql: created.sql });
  });
  // The test's own context: node:test has set `passed` before it runs afterEach hooks (false when
  // the body threw or timed out); a subtest that fails runs this hook for itself.
  afterEach((t) => {
    if (!('passed' in t) || !t.passed) failed = true;
  });
  after(async () => {
    const errors: unknown[] = [];
    for (const close of teardown.reverse())
      await Promise.resolve()
        .then(close)
        .catch((error: unknown) => errors.push(error));
    if (created && failed) {
      await created.sql.end({ timeout: 5 });
      console.log(`# kept database ${created.name} for inspection (a test failed)`);
    } else {
      await created?.drop();
    }
    if (errors.length > 0) throw new AggregateError(errors, "closing the test file's resources failed");
  });
  return handle;
}

interface CreatedDatabase {
  url: string;
  name: string;
  sql: postgres.Sql;
  drop(): Promise<void>;
}

async function createDatabase(): Promise<CreatedDatabase> {
  const name = `inbox_test_${randomBytes(6).toString('hex')}`;
  await onAdmin((admin) => admin.unsafe(`create database "${name}" template "${templateDatabase()}"`));
  const url = databaseUrl(adminDatabaseUrl(), name);
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  return {
    url,
    name,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      await dropDatabase(name);
    },
  };
}

export async function databaseExists(name: string): Promise<boolean> {
  const rows = await onAdmin((admin) => admin`select 1 from pg_database where datname = ${name}`);
  return rows.length > 0;
}

export async function dropDatabase(name: string): Promise<void> {
  await onAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
}

async function onAdmin<T>(run: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(adminDatabaseUrl(), { max: 1, onnotice: () => {} });
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}
