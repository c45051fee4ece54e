import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Database } from '../../src/db/client.ts';
import { type ArchiveWriter, createArchiveWriter } from '../../src/operations/archive.ts';
import { dropExpiredPartitions } from '../../src/operations/partition-retention.ts';
import type { CpuSplit } from '../support/cpu.ts';
import { type DurableRun, measureDurableRun } from '../support/durable-run.ts';
import { levelNamed } from '../support/levels.ts';
import { BENCH_SECRET, type Started, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';
import type postgres from 'postgres';
import { monthPartition } from '../../src/db/inbox-partitions.ts';
import { oldestMonth } from './operations-data.ts';

const DAY_MS = 86_400_000;

export interface MonthRetention {
  partition: string;
  rows: number;
  seconds: number;
  /** Of those, the time spent writing and fsyncing the archive files (the rest: reading the rows, detach and drop). */
  archiveWriteSeconds: number;
  archiveBytes: number;
  /** Rows left in webhook_inbox afterwards. */
  rowsAfter: number;
}

/**
 * Retention of the oldest month through the code the daily run uses (dropExpiredPartitions): its
 * rows archived (gzip, fsynced) then the partition detached and dropped, in one transaction. The
 * retention window is set so that exactly that month is past it.
 */
export async function retainOneMonth(db: Database, sql: postgres.Sql, now: Date): Promise<MonthRetention> {
  const month = oldestMonth(now);
  const retentionDays = Math.floor((now.getTime() - month.to.getTime()) / DAY_MS);
  const archiveDir = await mkdtemp(path.join(tmpdir(), 'bench-archive-'));
  try {
    const writer = createArchiveWriter({ clock: () => new Date() });
    let archiveWriteMs = 0;
    const archive: ArchiveWriter = {
      async append(file, events) {
        const started = performance.now();
        await writer.append(file, events);
        archiveWriteMs += performance.now() - started;
      },
    };
    const providers = ['stripe', 'pagarme', 'asaas'].map((name) => ({ name, retentionDays }));
    const started = performance.now();
    const result = await dropExpiredPartitions({ db, archive }, { providers, now, archiveDir });
    const seconds = (performance.now() - started) / 1000;
    const dropped = result.dropped.find((d) => d.partition === month.name);
    if (!dropped || result.dropped.length !== 1) throw new Error(`retention was to drop ${month.name} alone; it answered ${JSON.stringify(result)}`);
    const [after] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_inbox`;
    return {
      partition: month.name,
      rows: dropped.rows,
      seconds,
      archiveWriteSeconds: archiveWriteMs / 1000,
      archiveBytes: await folderBytes(archiveDir),
      rowsAfter: after!.n,
    };
  } finally {
    await rm(archiveDir, { recursive: true, force: true });
  }
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

export interface IngestAtSize {
  connections: number;
  /** Alternating runs, empty inbox first: deliveries/s and CPU µs per delivery of each. */
  empty: Array<{ requestsPerSecond: number; cpu: CpuSplit; ok: number }>;
  big: Array<{ requestsPerSecond: number; cpu: CpuSplit; ok: number }>;
}

const INGEST_REPEATS = 3;
const INGEST_AMOUNT = 20_000;
const WARM_UP_AMOUNT = 10_000;

/**
 * The receiver (`node src/main.ts`, INBOX_ROLE=receiver) at 64 connections on the big inbox and on
 * an empty one, alternating, same warm-up: what the table's size costs ingest (its current month's
 * partition is small either way; the dedupe keys' index holds every key of the history).
 */
export async function ingestAtSize(options: {
  big: { url: string; sql: postgres.Sql };
  empty: { url: string; sql: postgres.Sql };
  postmasterPid?: number;
}): Promise<IngestAtSize> {
  const level = levelNamed('c64');
  const started: Started[] = [];
  let batch = 0;
  const deliveries = (amount: number) => {
    batch += 1;
    const prefix = `evt_size_${Date.now()}_${batch}_`;
    return { prefix, requests: signedDeliveries(prefix, amount + 2 * level.connections, BENCH_SECRET) };
  };
  const result: IngestAtSize = { connections: level.connections, empty: [], big: [] };
  const [{ now: ingestStarted }] = (await options.big.sql<{ now: Date }[]>`select now()`) as unknown as [{ now: Date }];
  try {
    const targets = [] as Array<{ name: 'empty' | 'big'; server: Started; sql: postgres.Sql }>;
    for (const name of ['empty', 'big'] as const) {
      const server = await startInbox(options[name].url, { INBOX_ROLE: 'receiver' }, `inbox-${name}`);
      started.push(server);
      targets.push({ name, server, sql: options[name].sql });
    }
    // Warm-up, not reported: a first run at 64 connections was ~40% slower on either inbox (JIT,
    // pools, prepared statements, the current partition's pages).
    for (const { server, sql } of targets) {
      await measureDurableRun({
        target: { baseUrl: server.baseUrl, pid: server.process.pid, sql },
        level,
        amount: WARM_UP_AMOUNT,
        deliveries: deliveries(WARM_UP_AMOUNT),
      });
    }
    for (let repeat = 0; repeat < INGEST_REPEATS; repeat += 1) {
      for (const { name, server, sql } of targets) {
        const run: DurableRun = await measureDurableRun({
          target: { baseUrl: server.baseUrl, pid: server.process.pid, sql },
          level,
          amount: INGEST_AMOUNT,
          deliveries: deliveries(INGEST_AMOUNT),
          postmasterPid: options.postmasterPid,
        });
        if (!run.committed.matches)
          throw new Error(`ingest on the ${name} inbox: ${run.ok} answered 200, ${run.committed.rows} rows, ${run.committed.jobs} jobs`);
        result[name].push({ requestsPerSecond: run.requestsPerSecond, cpu: run.cpu, ok: run.ok });
      }
    }
  } finally {
    for (const server of started) await server.process.stop();
    // Its deliveries are today's rows: left in, a larger size's 24 h window and sweep would see them.
    await removeIngested(options.big.sql, ingestStarted);
  }
  return result;
}

async function removeIngested(sql: postgres.Sql, since: Date): Promise<void> {
  // Planned on statistics from before the 60,000+ ingested rows, this delete once chose a plan that
  // ran for more than 6 minutes (2026-12-04 19:24 UTC); analyzed first, it hash-joins in seconds.
  await sql.unsafe(`analyze pgboss.job_common, ${monthPartition(since).name}`);
  await sql`delete from pgboss.job where name = 'webhooks' and created_on >= ${since} and data->>'inboxId' in (select id::text from webhook_inbox where received_at >= ${since} and event_id like 'evt_size_%')`;
  await sql`delete from webhook_inbox where received_at >= ${since} and event_id like 'evt_size_%'`;
  await sql`delete from webhook_event_keys where received_at >= ${since} and event_id like 'evt_size_%'`;
  await sql.unsafe(`vacuum analyze ${monthPartition(since).name}`);
}
