import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { TEMPLATE_DATABASE, adminDatabaseUrl, databaseUrl } from './env.ts';

export interface TestDatabase {
  url: string;
  name: string;
  /** A plain postgres.js client for assertions (not the one the code under test uses). */
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/**
 * One database per test file, cloned from a template that test/run.ts migrated once (ours and
 * pg-boss's schema), so a file starts from a clean, fully migrated database in milliseconds.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `inbox_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminDatabaseUrl(), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}" template "${TEMPLATE_DATABASE}"`);
  } finally {
    await admin.end();
  }
  const url = databaseUrl(adminDatabaseUrl(), name);
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  return {
    url,
    name,
    sql,
    async drop() {
      await sql.end({ timeout: 5 });
      const cleanup = postgres(adminDatabaseUrl(), { max: 1, onnotice: () => {} });
      try {
        await cleanup.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
