import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { EmbeddedDatabaseError } from './embedded-error.ts';

/**
 * The port a cluster is started on when it is free; otherwise any free port. Nobody assumes it:
 * the port of a running cluster is read from its own `postmaster.pid`.
 */
export const PREFERRED_EMBEDDED_PORT = 54329;

export const EMBEDDED_USER = 'postgres';
export const EMBEDDED_PASSWORD = 'postgres';

export function embeddedDatabaseUrl(port: number): string {
  return `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;
}

/** What PostgreSQL writes in `<data dir>/postmaster.pid` while it runs (PostgreSQL 10+ layout). */
export interface PostmasterPid {
  pid: number;
  dataDir: string;
  port: number;
  /** `starting`, `ready`, `stopping` or `standby`. */
  status: string;
}

export function parsePostmasterPid(text: string): PostmasterPid | undefined {
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return undefined;
  return { pid, dataDir: lines[1] ?? '', port, status: (lines[7] ?? '').trim() };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists and belongs to another user (the `postgres` user's postmaster, seen by a non-root caller).
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The cluster running on `dataDir` and ready for connections, from its postmaster.pid; undefined if none. */
export function runningCluster(dataDir: string): PostmasterPid | undefined {
  let text: string;
  try {
    text = readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = parsePostmasterPid(text);
  return pid && pid.status === 'ready' && isAlive(pid.pid) ? pid : undefined;
}

function canonical(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/**
 * Refuses a server whose data directory is not `dataDir`: a port, a postmaster.pid left by a crash,
 * or an address remembered from yesterday can all lead to another checkout's database.
 */
export async function verifyDataDirectory(url: string, dataDir: string): Promise<void> {
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => {} });
  let served: string;
  try {
    const [row] = await sql<{ data_directory: string }[]>`show data_directory`;
    served = row!.data_directory;
  } catch (error) {
    throw new EmbeddedDatabaseError(
      'embedded_unreachable',
      `The embedded PostgreSQL of ${dataDir} does not answer at ${new URL(url).host}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  } finally {
    await sql.end({ timeout: 1 });
  }
  if (canonical(served) !== canonical(dataDir)) {
    throw new EmbeddedDatabaseError(
      'embedded_cluster_not_ours',
      `The PostgreSQL at ${new URL(url).host} serves ${served}, not this checkout's ${dataDir}: refusing to use another checkout's database.`,
    );
  }
}
