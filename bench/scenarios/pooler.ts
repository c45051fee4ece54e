import type postgres from 'postgres';
import { findPgBouncer, startPgBouncer } from '../../test/support/pgbouncer.ts';
import { waitFor } from '../../test/support/wait.ts';
import type { BenchDatabaseServer } from '../support/database.ts';
import { type LoadResult, runLoad } from '../support/load.ts';
import { runPacedLoad } from '../support/paced-load.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';

/** A trickle, where idle workers wait for work: the case LISTEN/NOTIFY is for. */
const PACED_RATE = 50;
const PACED_EVENTS = 1_000;
const SCALE_OUT_CONNECTIONS = 64;
const SCALE_OUT_REQUESTS = 12_000;
const WARM_UP_REQUESTS = 1_000;
const POOLER_SERVER_CONNECTIONS = 20;

export interface LatencyRow {
  label: string;
  env: Record<string, string>;
  events: number;
  /** received_at (the ingest transaction) → processed_at (the processing transaction), ms. */
  ackToProcessedMs: { p50: number; p99: number; max: number };
  ack: LoadResult;
}

export interface ScaleOutRow {
  receivers: number;
  requestsPerSecond: number;
  p99Ms: number;
  ok: number;
}

export interface PoolerRun {
  pgbouncer: string | null;
  latency: LatencyRow[];
  scaleOut: ScaleOutRow[];
  /** 2 receivers' deliveries/s ÷ 1 receiver's, same PostgreSQL, same 64 connections in all. */
  scaleOutRatio: number | null;
}

async function ackToProcessed(sql: postgres.Sql, prefix: string): Promise<LatencyRow['ackToProcessedMs']> {
  const [row] = await sql<{ p50: number; p99: number; max: number }[]>`
    with lag as (select extract(epoch from processed_at - received_at) * 1000 as ms from webhook_inbox where event_id like ${`${prefix}%`})
    select round(percentile_cont(0.5) within group (order by ms))::float8 as p50,
           round(percentile_cont(0.99) within group (order by ms))::float8 as p99,
           round(max(ms))::float8 as max from lag`;
  return row!;
}

/** One INBOX_ROLE=all container at a paced trickle; every event's wait from its ingest commit to its processing commit. */
async function measureLatency(server: BenchDatabaseServer, label: string, env: Record<string, string>, viaPooler: boolean): Promise<LatencyRow> {
  const database = await server.createDatabase('latency');
  const bouncer = viaPooler ? await startPgBouncer({ binary: findPgBouncer()!, upstream: database.url, poolSize: POOLER_SERVER_CONNECTIONS }) : undefined;
  const url = bouncer ? bouncer.urlFor(database.name) : database.url;
  const service = await startInbox(url, { INBOX_ROLE: 'all', ...env }, `latency-${viaPooler ? 'pooler' : 'direct'}`);
  const prefix = `evt_bench_latency_${database.name}_`;
  try {
    const ack = await runPacedLoad({
      baseUrl: service.baseUrl,
      requests: signedDeliveries(prefix, PACED_EVENTS, BENCH_SECRET),
      rate: PACED_RATE,
      amount: PACED_EVENTS,
      connections: 8,
    });
    await waitFor(
      async () => {
        const [row] = await database.sql<
          { n: number }[]
        >`select count(*)::int as n from webhook_inbox where event_id like ${`${prefix}%`} and status = 'processed'`;
        return row!.n === PACED_EVENTS;
      },
      { message: 'every paced event to be processed', timeoutMs: 120_000, intervalMs: 200 },
    );
    return { label, env, events: PACED_EVENTS, ackToProcessedMs: await ackToProcessed(database.sql, prefix), ack };
  } finally {
    await service.process.stop();
    await bouncer?.stop();
  }
}

/** `count` receivers (no workers) on one database, 64 connections split between them, run at once. */
async function measureReceivers(server: BenchDatabaseServer, count: number): Promise<ScaleOutRow> {
  const database = await server.createDatabase(`scale_${count}`);
  const services = await Promise.all(Array.from({ length: count }, (_, i) => startInbox(database.url, { INBOX_ROLE: 'receiver' }, `scale-out-${count}-${i}`)));
  try {
    const perReceiver = SCALE_OUT_REQUESTS / count;
    const connections = SCALE_OUT_CONNECTIONS / count;
    await Promise.all(
      services.map((s, i) =>
        runLoad({
          baseUrl: s.baseUrl,
          requests: signedDeliveries(`evt_bench_warm_${count}_${i}_`, WARM_UP_REQUESTS + 2 * connections, BENCH_SECRET),
          connections,
          amount: WARM_UP_REQUESTS,
          maxSeconds: 120,
        }),
      ),
    );
    const runs = await Promise.all(
      services.map((s, i) =>
        runLoad({
          baseUrl: s.baseUrl,
          requests: signedDeliveries(`evt_bench_scale_${count}_${i}_`, perReceiver + 2 * connections, BENCH_SECRET),
          connections,
          amount: perReceiver,
          maxSeconds: 180,
        }),
      ),
    );
    const ok = runs.reduce((a, r) => a + r.ok, 0);
    const seconds = Math.max(...runs.map((r) => r.seconds));
    return { receivers: count, requestsPerSecond: ok / seconds, p99Ms: Math.max(...runs.map((r) => r.latencyMs.p99)), ok };
  } finally {
    await Promise.all(services.map((s) => s.process.stop()));
  }
}

/**
 * `npm run bench -- pooler` (opt-in). What polling instead of LISTEN/NOTIFY costs: ack → processed
 * latency direct (LISTEN/NOTIFY) and through PgBouncer in transaction mode (no prepared statements,
 * no LISTEN: workers poll). And what a second receiver container buys against the same PostgreSQL.
 */
export async function runPooler(options: { server: BenchDatabaseServer; log: (line: string) => void }): Promise<PoolerRun> {
  const { server, log } = options;
  const binary = findPgBouncer();
  const latency: LatencyRow[] = [];
  const variants: Array<[string, Record<string, string>, boolean]> = [
    ['direct, LISTEN/NOTIFY', {}, false],
    ['PgBouncer transaction mode, polling every 2 s (default)', { DATABASE_PREPARED_STATEMENTS: 'false', DATABASE_LISTEN_NOTIFY: 'false' }, true],
    [
      'PgBouncer transaction mode, polling every 0.5 s',
      { DATABASE_PREPARED_STATEMENTS: 'false', DATABASE_LISTEN_NOTIFY: 'false', WORKER_POLLING_INTERVAL_SECONDS: '0.5' },
      true,
    ],
  ];
  for (const [label, env, viaPooler] of variants) {
    if (viaPooler && !binary) {
      log(`  ${label}: skipped, pgbouncer is not installed`);
      continue;
    }
    const row = await measureLatency(server, label, env, viaPooler);
    log(
      `  ack → processed at ${PACED_RATE} req/s, ${label}: p50 ${row.ackToProcessedMs.p50} ms, p99 ${row.ackToProcessedMs.p99} ms, max ${row.ackToProcessedMs.max} ms (ack p50 ${row.ack.latencyMs.p50} ms, p99 ${row.ack.latencyMs.p99} ms)`,
    );
    latency.push(row);
  }
  const scaleOut: ScaleOutRow[] = [];
  for (const count of [1, 2]) {
    const row = await measureReceivers(server, count);
    log(
      `  ${count} receiver${count > 1 ? 's' : ''}, ${SCALE_OUT_CONNECTIONS} connections in all, one PostgreSQL: ${row.requestsPerSecond.toFixed(0)} deliveries/s, worst p99 ${row.p99Ms} ms (${row.ok} × 200)`,
    );
    scaleOut.push(row);
  }
  const scaleOutRatio = scaleOut.length === 2 ? scaleOut[1]!.requestsPerSecond / scaleOut[0]!.requestsPerSecond : null;
  if (scaleOutRatio !== null) log(`  scale-out: 2 receivers = ${scaleOutRatio.toFixed(2)}× one receiver`);
  return { pgbouncer: binary ? binary.version.join('.') : null, latency, scaleOut, scaleOutRatio };
}
