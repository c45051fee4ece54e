import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import postgres from 'postgres';
import { postgresExecutor } from './client.ts';
import { INBOX_PARTITION_MONTHS_AHEAD, createMonthPartitionsAhead } from './inbox-partitions.ts';
import { postgresJsConnection } from './socket-url.ts';

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

// Any constant both old and new instances agree on; it only has to differ from other apps' keys.
const MIGRATION_LOCK_KEY = 72_010_001;

/**
 * Applies the committed drizzle-kit migrations (drizzle's own bookkeeping table and rule: a
 * migration runs when its journal time is newer than the last one recorded), all in ONE transaction
 * that first takes a transaction-scoped advisory lock. Several instances may start at once; the
 * second waits for the first to commit, then reads what it recorded and has nothing left to do.
 *
 * Transaction-scoped on purpose: through a transaction pooler (PgBouncer `pool_mode = transaction`)
 * a session lock would be taken on one server connection, the DDL could run on another and the
 * unlock on a third, so the lock would guard nothing and stay held on a pooled connection.
 * drizzle's own migrate() reads the last applied migration before its transaction, so it cannot
 * put that read under the lock; this runner does.
 */
export async function applyMigrations(url: string): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder });
  // Unnamed statements: a pooler without prepared-statement support must be able to run this too.
  const { url: postgresJsUrl, ...socket } = postgresJsConnection(url);
  const sql = postgres(postgresJsUrl, { ...socket, max: 1, onnotice: () => {}, connect_timeout: 10, prepare: false });
  try {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await applyPending(sql, migrations);
        return;
      } catch (error) {
        if (attempt >= MIGRATION_ATTEMPTS || !lostCreateRace(error)) throw error;
      }
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}

const MIGRATION_ATTEMPTS = 3;

/**
 * A transaction that began before another instance's migration committed may, once it holds the
 * lock, still find that instance's new schema or table missing from its session's catalog cache
 * (the same race pg-boss's install showed, src/queue/boss.ts): CREATE … IF NOT EXISTS then fails on
 * a catalog unique index, or as a duplicate. The next transaction sees the commit.
 */
function lostCreateRace(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === '23505' || code === '42P06' || code === '42P07' || code === '42710';
}

async function applyPending(sql: postgres.Sql, migrations: ReturnType<typeof readMigrationFiles>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx.unsafe('create schema if not exists drizzle');
    await tx.unsafe('create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)');
    const [last] = await tx<{ created_at: string }[]>`select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
    for (const migration of migrations) {
      if (last !== undefined && Number(last.created_at) >= migration.folderMillis) continue;
      for (const statement of migration.sql) if (statement.trim() !== '') await tx.unsafe(statement);
      await tx`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`;
    }
    // Every start, under the same lock and with the same rights as the migrations: the inbox's
    // partitions for this month and the next three (the daily retention run does it too).
    await createMonthPartitionsAhead(postgresExecutor(tx), new Date(), INBOX_PARTITION_MONTHS_AHEAD);
  });
}
