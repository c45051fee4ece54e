import { PgBoss } from 'pg-boss';
import type { AppConfig } from '../config/load-config.ts';
import { type DatabaseHandle, connectDatabase } from '../db/client.ts';
import { databaseFailureReason, databaseTarget, isDatabaseUnreachable } from '../db/database-unreachable.ts';
import { embeddedDatabaseUrl, runningCluster, verifyDataDirectory } from '../db/embedded-address.ts';
import { EmbeddedDatabaseError } from '../db/embedded-error.ts';
import { findEmbeddedLocation, isInitialised } from '../db/embedded-location.ts';
import { CliError, exitCodes } from './exit-codes.ts';

export interface ResolvedDatabase {
  url: string;
  /** Said on stderr so an operator knows which database answered. */
  source: string;
  /** Stops the embedded cluster if this command started it. */
  release(): Promise<void>;
}

async function resolveEmbedded(config: AppConfig, notice: (message: string) => void): Promise<ResolvedDatabase> {
  const { dataDir } = await findEmbeddedLocation(config.dataDir);
  const running = runningCluster(dataDir);
  if (running) {
    const url = embeddedDatabaseUrl(running.port);
    await verifyDataDirectory(url, dataDir);
    return { url, source: `the running embedded PostgreSQL of ${dataDir} (127.0.0.1:${running.port})`, release: async () => {} };
  }
  if (!isInitialised(dataDir)) {
    throw new CliError(
      exitCodes.database,
      `No database: DATABASE_URL is not set and ${dataDir} holds no embedded cluster. Set DATABASE_URL (or INBOX_DATA_DIR), or start the service once with \`npm start\`.`,
    );
  }
  // What is known: no cluster runs on this data directory. The service may still be up without its database.
  notice(`starting the embedded PostgreSQL in ${dataDir} for this command (no embedded cluster is running on it)`);
  const { startEmbeddedPostgres } = await import('../db/embedded.ts');
  const embedded = await startEmbeddedPostgres({ baseDir: config.dataDir, preferredPort: 0 });
  return { url: embedded.url, source: `the embedded PostgreSQL in ${dataDir} (started for this command)`, release: () => embedded.stop() };
}

/**
 * The service's database, found the way the service finds it: DATABASE_URL; else this checkout's
 * embedded cluster (INBOX_DATA_DIR), at the port its own postmaster.pid gives while it runs and only
 * if it serves this checkout's data directory; else that cluster started for this one command.
 */
export async function resolveDatabase(config: AppConfig, notice: (message: string) => void): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { url: config.databaseUrl, source: `DATABASE_URL (${new URL(config.databaseUrl).host})`, release: async () => {} };
  try {
    return await resolveEmbedded(config, notice);
  } catch (error) {
    if (error instanceof EmbeddedDatabaseError) throw new CliError(exitCodes.database, error.message, { cause: error });
    throw error;
  }
}

export interface CliConnection {
  handle: DatabaseHandle;
  /** Started only for commands that enqueue (replay, sweep): no workers, no maintenance, no cron, no migrations. */
  boss: PgBoss | undefined;
  close(): Promise<void>;
}

export async function connect(url: string, config: AppConfig, options: { boss: boolean }): Promise<CliConnection> {
  const handle = connectDatabase({
    url,
    poolSize: 4,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
    applicationName: 'inboxctl',
    preparedStatements: config.database.preparedStatements,
  });
  let boss: PgBoss | undefined;
  try {
    // Reachable, and migrated: the service creates the table at start.
    await handle.sql`select 1 from webhook_inbox limit 0`;
    if (options.boss) {
      boss = new PgBoss({ connectionString: url, max: 2, supervise: false, schedule: false, migrate: false, application_name: 'inboxctl' });
      boss.on('error', () => {});
      await boss.start();
    }
  } catch (error) {
    await boss?.stop({ graceful: false, close: true }).catch(() => {});
    await handle.close().catch(() => {});
    const unmigrated = (error as { code?: string }).code === '42P01';
    const hint = unmigrated ? ' (the inbox table is missing: start the service once so it migrates the database)' : '';
    const what = isDatabaseUnreachable(error) ? 'cannot reach' : 'cannot use';
    throw new CliError(exitCodes.database, `${what} the database at ${databaseTarget(url)}: ${databaseFailureReason(error)}${hint}`, {
      cause: error,
      code: unmigrated ? 'database_not_migrated' : undefined,
    });
  }
  return {
    handle,
    boss,
    async close() {
      await boss?.stop({ graceful: false, close: true });
      await handle.close();
    },
  };
}
