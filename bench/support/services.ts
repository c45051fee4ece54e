import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { applyMigrations } from '../../src/db/migrate.ts';
import { freePort } from '../../test/fault/support/private-cluster.ts';
import { type ServiceProcess, spawnService } from '../../test/fault/support/service-process.ts';
import { SEED_TABLE_DDL } from '../peer/seed-table.ts';

export const RESULTS_DIR = path.resolve(import.meta.dirname, '../results');
export const BENCH_SECRET = 'whsec_bench_secret_0123456789';

export interface Started {
  process: ServiceProcess;
  baseUrl: string;
  logFile: string;
}

function logFileFor(name: string): string {
  const dir = path.join(RESULTS_DIR, 'logs');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}-${new Date().toISOString().replaceAll(':', '-')}.log`);
}

/** With BENCH_PROFILE=1, the children write V8 CPU profiles (read by bench/profile-summary.ts). */
function profileArgs(name: string): string[] {
  if (process.env.BENCH_PROFILE !== '1') return [];
  const dir = path.join(RESULTS_DIR, 'profiles');
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`];
}

/** The bare Hono server of bench/baseline-server.ts. */
export async function startBaseline(): Promise<Started> {
  const logFile = logFileFor('baseline');
  const process = await spawnService({
    entry: 'bench/baseline-server.ts',
    port: await freePort(),
    env: { WEBHOOK_SECRET_STRIPE: BENCH_SECRET },
    outputFile: logFile,
    nodeArgs: profileArgs('baseline'),
  });
  return { process, baseUrl: process.baseUrl, logFile };
}

async function spawnPeer(entry: string, name: string, databaseUrl: string): Promise<Started> {
  const logFile = logFileFor(name);
  const process = await spawnService({
    entry,
    port: await freePort(),
    env: { DATABASE_URL: databaseUrl, WEBHOOK_SECRET_STRIPE: BENCH_SECRET },
    outputFile: logFile,
    nodeArgs: profileArgs(name),
    readyTimeoutMs: 120_000,
  });
  return { process, baseUrl: process.baseUrl, logFile };
}

/**
 * The peer of bench/peer/peer-server.ts on a database of its own. Its tables are the inbox's own
 * migrations (same columns, partitions and indexes), applied here as the peer's deploy step would.
 */
export async function startPeer(databaseUrl: string): Promise<Started> {
  await applyMigrations(databaseUrl);
  return spawnPeer('bench/peer/peer-server.ts', 'peer', databaseUrl);
}

/** The seed-style peer of bench/peer/seed-peer-server.ts on a database of its own, its one table created first. */
export async function startSeedPeer(databaseUrl: string): Promise<Started> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(SEED_TABLE_DDL);
  } finally {
    await sql.end();
  }
  return spawnPeer('bench/peer/seed-peer-server.ts', 'seed-peer', databaseUrl);
}

/** The node flags of package.json's `start` script (`node <flags> src/main.ts`), which the Dockerfile's CMD repeats. */
export function startScriptNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: { start: string } };
  const flags = /\bnode((?:\s+--\S+)*)\s+src\/main\.ts/.exec(scripts.start);
  if (!flags) throw new Error(`package.json's start script does not run node … src/main.ts: ${scripts.start}`);
  return flags[1]!.split(/\s+/).filter((flag) => flag !== '');
}

/**
 * The flags `npm start` runs the service with: the bench measures the service as it is deployed.
 * BENCH_NODE_FLAGS replaces them for a tuning run (`BENCH_NODE_FLAGS=` runs with none).
 */
function serviceNodeFlags(): string[] {
  if (process.env.BENCH_NODE_FLAGS !== undefined) return process.env.BENCH_NODE_FLAGS.split(' ').filter((flag) => flag !== '');
  return startScriptNodeFlags();
}

/** The real service, `node src/main.ts`, as it runs in production (its own defaults unless `env` says otherwise). */
export async function startInbox(databaseUrl: string, env: Record<string, string>, name = 'inbox'): Promise<Started> {
  const logFile = logFileFor(name);
  const process = await spawnService({
    entry: 'src/main.ts',
    port: await freePort(),
    env: { DATABASE_URL: databaseUrl, WEBHOOK_SECRET_STRIPE: BENCH_SECRET, LOG_LEVEL: 'info', ...env },
    outputFile: logFile,
    nodeArgs: [...serviceNodeFlags(), ...profileArgs(name)],
    readyTimeoutMs: 120_000,
  });
  return { process, baseUrl: process.baseUrl, logFile };
}
