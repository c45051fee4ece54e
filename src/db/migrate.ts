import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

// Any constant both old and new instances agree on; it only has to differ from other apps' keys.
const MIGRATION_LOCK_KEY = 72_010_001;

/**
 * Applies the committed drizzle-kit migrations. Several instances may start at once, so the run is
 * serialised by a session advisory lock; a single-connection client keeps lock and DDL on one session.
 */
export async function applyMigrations(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
    try {
      await migrate(drizzle(sql), { migrationsFolder });
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
}
