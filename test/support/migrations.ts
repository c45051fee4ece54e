import { fileURLToPath } from 'node:url';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { TestDatabase } from './database.ts';

const migrations = readMigrationFiles({ migrationsFolder: fileURLToPath(new URL('../../drizzle', import.meta.url)) });
const journal = (await import('../../drizzle/meta/_journal.json', { with: { type: 'json' } })).default as { entries: Array<{ tag: string }> };

/**
 * The database as an install of an earlier version has it: every migration before `tag`, applied
 * as the runner applies them (src/db/migrate.ts), so the service's next start applies the rest.
 */
export async function migrateUpTo(database: TestDatabase, tag: string): Promise<void> {
  const index = journal.entries.findIndex((e) => e.tag === tag);
  if (index <= 0) throw new Error(`migration ${tag} is not in the journal`);
  await database.sql.unsafe('drop schema public cascade; create schema public; drop schema drizzle cascade');
  await database.sql.begin(async (tx) => {
    await tx.unsafe('create schema drizzle');
    await tx.unsafe('create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)');
    for (const migration of migrations.slice(0, index)) {
      for (const statement of migration.sql) if (statement.trim() !== '') await tx.unsafe(statement);
      await tx`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`;
    }
  });
}
