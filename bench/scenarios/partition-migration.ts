import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type postgres from 'postgres';
import { applyMigrations } from '../../src/db/migrate.ts';

const PARTITIONING = '0012_partitioned_inbox';

export interface PartitionMigrationRun {
  rows: number;
  buildSeconds: number;
  /** applyMigrations from LOCK TABLE to COMMIT, near enough: the whole run of the one pending migration. */
  migrationSeconds: number;
  /** How long an insert sent 1 s after the migration started waited for its lock. */
  insertWaitSeconds: number;
  rowsAfter: number;
  partitions: number;
}

/**
 * Migration 0012 on an install from before partitioning that holds `rows` settled rows over the
 * last 13 months (with their dedupe keys): how long it holds webhook_inbox's ACCESS EXCLUSIVE lock,
 * which is how long deliveries wait (or get 503 past COMMIT_DEADLINE_MS).
 */
export async function runPartitionMigration(options: {
  databaseUrl: string;
  sql: postgres.Sql;
  rows: number;
  log: (line: string) => void;
}): Promise<PartitionMigrationRun> {
  const { sql } = options;
  const started = Date.now();
  await migrateUpTo(sql, PARTITIONING);
  await sql`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, fingerprint, occurred_at, received_at, status, attempts, processed_at)
    select case when g % 10 < 7 then 'stripe' when g % 10 < 9 then 'pagarme' else 'asaas' end, 'evt_mig_' || g, 'charge.succeeded', 'ch_mig_' || (g / 10),
           jsonb_build_object('id', 'evt_mig_' || g, 'type', 'charge.succeeded', 'data', jsonb_build_object('object', jsonb_build_object('id', 'ch_mig_' || (g / 10), 'amount', 2000))),
           convert_to('{"id":"evt_mig_' || g || '","type":"charge.succeeded"}', 'UTF8'), md5(g::text), r, r, 'processed', 1, r
    from generate_series(1, ${options.rows}::bigint) g, lateral (select now() - interval '395 days' * (1 - g::float8 / ${options.rows}) as r) t`;
  await sql`insert into webhook_event_keys (provider, event_id, fingerprint, received_at) select provider, event_id, fingerprint, received_at from webhook_inbox`;
  await sql`vacuum analyze webhook_inbox`;
  const buildSeconds = (Date.now() - started) / 1000;
  options.log(`  partition migration: ${options.rows} unpartitioned rows (built in ${buildSeconds.toFixed(1)} s)`);
  const migrationStarted = performance.now();
  const migration = applyMigrations(options.databaseUrl);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const insertStarted = performance.now();
  const insert = sql`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at)
    values ('stripe', 'evt_mig_during', 'charge.succeeded', 'ch_mig_during', '{}', '\\x7b7d', now())`.then(() => performance.now());
  await migration;
  const migrationSeconds = (performance.now() - migrationStarted) / 1000;
  const insertWaitSeconds = ((await insert) - insertStarted) / 1000;
  const [after] = await sql<{ rows: number; partitions: number }[]>`
    select (select count(*)::int from webhook_inbox) as rows,
           (select count(*)::int from pg_inherits where inhparent = 'webhook_inbox'::regclass) as partitions`;
  return { rows: options.rows, buildSeconds, migrationSeconds, insertWaitSeconds, rowsAfter: after!.rows, partitions: after!.partitions };
}

/** Every migration before `tag`, applied and recorded as the runner does (test/db/partition-migration.test.ts does the same). */
async function migrateUpTo(sql: postgres.Sql, tag: string): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder: fileURLToPath(new URL('../../drizzle', import.meta.url)) });
  const journal = (await import('../../drizzle/meta/_journal.json', { with: { type: 'json' } })).default as { entries: Array<{ tag: string }> };
  const index = journal.entries.findIndex((e) => e.tag === tag);
  await sql.begin(async (tx) => {
    await tx.unsafe('create schema if not exists drizzle');
    await tx.unsafe('create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)');
    for (const migration of migrations.slice(0, index)) {
      for (const statement of migration.sql) if (statement.trim() !== '') await tx.unsafe(statement);
      await tx`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`;
    }
  });
}
