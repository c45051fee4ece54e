import { chmod, chown, open, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { EMBEDDED_PASSWORD, EMBEDDED_USER } from './embedded-address.ts';
import { EmbeddedDatabaseError } from './embedded-error.ts';
import type { EmbeddedLocation } from './embedded-location.ts';
import { type ClusterUser, runAsClusterUser, runClusterCommand } from './embedded-process.ts';
import { makeDirectory } from '../fs/make-directory.ts';

/** The server's log, in the data directory: the one folder the cluster's user surely owns. */
export function clusterLogFile(dataDir: string): string {
  return path.join(dataDir, 'postgres.log');
}

export async function initialiseCluster(location: EmbeddedLocation, user: ClusterUser | undefined): Promise<void> {
  const { dataDir } = location;
  await makeDirectory(dataDir);
  await chmod(dataDir, 0o700);
  if (user) await chown(dataDir, user.uid, user.gid);
  // Beside the data directory, where the cluster's user can read it; the password is the
  // well-known development one (docs/getting-started.md), so the file's mode does not matter, only its removal.
  const passwordFile = path.join(path.dirname(dataDir), `.pwfile-${randomBytes(4).toString('hex')}`);
  await writeFile(passwordFile, `${EMBEDDED_PASSWORD}\n`, { mode: 0o644 });
  try {
    await runClusterCommand(
      location.binaries.initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        `--username=${EMBEDDED_USER}`,
        `--pwfile=${passwordFile}`,
        '--locale=C',
        '--lc-messages=C',
        '--encoding=UTF8',
      ],
      user,
      `Creating the embedded PostgreSQL in ${dataDir} failed`,
    );
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** `preferred` when nothing listens there, else (or with 0) a port the kernel picks. */
export function freePort(preferred = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (preferred !== 0 && error.code === 'EADDRINUSE') resolve(freePort(0));
      else reject(error);
    });
    server.listen(preferred, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function readFrom(file: string, offset: number): Promise<string> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const length = Math.max(0, size - offset);
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(length), 0, length, offset);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

const START_ATTEMPTS = 3;

/**
 * Starts the cluster with pg_ctl, which returns once PostgreSQL reports itself ready in
 * postmaster.pid. Loopback TCP only, no Unix socket. A port taken between the check and the bind
 * (another checkout starting at the same moment) is retried on another port.
 */
export async function startCluster(location: EmbeddedLocation, user: ClusterUser | undefined, preferredPort: number): Promise<number> {
  const { dataDir } = location;
  const logFile = clusterLogFile(dataDir);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort(attempt === 1 ? preferredPort : 0);
    const offset = await stat(logFile).then(
      (s) => s.size,
      () => 0,
    );
    const settings = `-c listen_addresses=127.0.0.1 -c port=${port} -c unix_socket_directories=''`;
    const result = await runAsClusterUser(location.binaries.pgCtl, ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', settings], user);
    if (result.code === 0) return port;
    const log = await readFrom(logFile, offset);
    if (attempt < START_ATTEMPTS && /could not bind|Address already in use/.test(log)) continue;
    throw new EmbeddedDatabaseError(
      'embedded_command_failed',
      `The embedded PostgreSQL in ${dataDir} did not start (pg_ctl exited with code ${result.code}).\n${result.output.trim()}\n${log.trim().slice(-2000)}\n(the whole log: ${logFile})`,
    );
  }
}

/** Fast shutdown: sessions are disconnected, the cluster checkpoints and exits. */
export async function stopCluster(location: EmbeddedLocation, user: ClusterUser | undefined): Promise<void> {
  await runClusterCommand(
    location.binaries.pgCtl,
    ['stop', '-w', '-t', '60', '-m', 'fast', '-D', location.dataDir],
    user,
    `Stopping the embedded PostgreSQL in ${location.dataDir} failed`,
  );
}
