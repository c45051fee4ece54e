import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { freePort } from './free-port.ts';
import { clusterUser } from '../../src/db/embedded-process.ts';
import { waitFor } from './wait.ts';

export interface PgBouncerBinary {
  path: string;
  /** `1.18.0` → [1, 18, 0]. */
  version: [number, number, number];
}

/** Debian's package installs it in /usr/sbin, which is not on every user's PATH. */
export function findPgBouncer(): PgBouncerBinary | undefined {
  const candidates = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) return undefined;
  const match = /PgBouncer (\d+)\.(\d+)\.(\d+)/.exec(execFileSync(found, ['--version'], { encoding: 'utf8' }));
  if (!match) return undefined;
  return { path: found, version: [Number(match[1]), Number(match[2]), Number(match[3])] };
}

/** `max_prepared_statements` (protocol-level prepared statements in transaction mode) came with 1.21.0. */
export function supportsPreparedStatements(binary: PgBouncerBinary): boolean {
  const [major, minor] = binary.version;
  return major > 1 || minor >= 21;
}

export interface PgBouncerOptions {
  binary: PgBouncerBinary;
  /** The PostgreSQL it pools, as a URL with user and password (the test cluster's, or the bench's own). */
  upstream: string;
  /** Server connections per database and user: what the whole deployment shares. */
  poolSize: number;
  /** Only on PgBouncer ≥ 1.21; 0 (or absent) is "no prepared statements", the default before 1.24. */
  maxPreparedStatements?: number;
}

export interface PgBouncer {
  port: number;
  /** The URL an application uses to reach `database` through the pooler. */
  urlFor(database: string): string;
  /** Every line PgBouncer logged (warnings and errors on stderr). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * A real PgBouncer in transaction mode on a free loopback port, configured in a temporary folder
 * of its own, in front of a test cluster. As root it runs as the cluster's user: PgBouncer refuses
 * to run as root.
 */
export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'inbox-pgbouncer-'));
  const port = await freePort();
  const user = await clusterUser();
  const upstream = new URL(options.upstream);
  const role = decodeURIComponent(upstream.username || 'postgres');
  // Clients are trusted; PgBouncer logs in to PostgreSQL with the password listed here.
  await writeFile(path.join(dir, 'userlist.txt'), `"${role}" "${decodeURIComponent(upstream.password)}"\n`, { mode: 0o600 });
  const settings: Record<string, string | number> = {
    listen_addr: '127.0.0.1',
    listen_port: port,
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: path.join(dir, 'userlist.txt'),
    pool_mode: 'transaction',
    default_pool_size: options.poolSize,
    max_client_conn: 2000,
    // pg (pg-boss's driver) and postgres.js send nothing else PgBouncer would refuse; kept for other clients.
    ignore_startup_parameters: 'extra_float_digits,options',
    ...(options.maxPreparedStatements === undefined ? {} : { max_prepared_statements: options.maxPreparedStatements }),
  };
  const ini = [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || 5432}`,
    '[pgbouncer]',
    ...Object.entries(settings).map(([name, value]) => `${name} = ${value}`),
    '',
  ].join('\n');
  await writeFile(path.join(dir, 'pgbouncer.ini'), ini);
  if (user) for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) await chown(path.join(dir, file), user.uid, user.gid);

  let lines = '';
  const child: ChildProcess = spawn(options.binary.path, [path.join(dir, 'pgbouncer.ini')], {
    ...(user && { uid: user.uid, gid: user.gid }),
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (chunk: Buffer) => (lines = (lines + chunk.toString('utf8')).slice(-20_000));
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  const urlFor = (database: string) => `postgres://${encodeURIComponent(role)}@127.0.0.1:${port}/${database}`;
  const stop = async () => {
    if (!hasExited) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (hasExited) throw new Error(`PgBouncer exited: ${lines}`);
        const probe = postgres(urlFor('postgres'), { max: 1, prepare: false, connect_timeout: 1, onnotice: () => {} });
        try {
          await probe.unsafe('select 1');
          return true;
        } finally {
          await probe.end({ timeout: 1 });
        }
      },
      { message: `PgBouncer to accept connections on port ${port}`, timeoutMs: 15_000, intervalMs: 100 },
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, urlFor, output: () => lines, stop };
}
