import { loadBacklog } from '../support/backlog.ts';
import { chargeSucceededBacklog } from '../support/charge-histories.ts';
import { startConsumer, waitUntil } from '../support/consumer.ts';
import { type CpuSplit, measureCpu } from '../support/cpu.ts';
import type { BenchDatabase } from '../support/database.ts';
import { percentile, runPacedLoad } from '../support/paced-load.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';
import { type StatementProfile, logStatements, readStatements, resetStatements } from '../support/statements.ts';

/** Backlog event ids are `evt_fwd_backlog_…`; the paced ingest's are `evt_bench_fwd_live_<chunk>_…`. */
const BACKLOG_PREFIX = 'fwd_backlog_';
const LIVE_PREFIX = 'evt_bench_fwd_live_';
/** The paced ingest goes in chunks of this many seconds until the backlog is forwarded. */
const CHUNK_SECONDS = 5;

export interface ForwardingBacklogRun {
  backlogEvents: number;
  /** Ingest paced meanwhile (req/s), until every backlog event was answered 2xx. */
  ingestRate: number;
  ingestOk: number;
  ingestP99Ms: number;
  /** Events answered 2xx (backlog and live), from the first payment change to the last 2xx. */
  events: number;
  eventsPerSecond: number;
  /** payment_events.created_at → the consumer's 2xx: every event, and the live ones alone. */
  latencyMs: { p50: number; p99: number; max: number };
  liveLatencyMs: { p50: number; p99: number };
  repeats: number;
  unverified: number;
  /** CPU µs per delivered event from the service's start to the last 2xx: processing and forwarding of the backlog, and the live ingest. */
  cpu: CpuSplit;
  statements?: StatementProfile;
}

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * Forwarding's capacity as its users meet it: a backlog of `charge.succeeded` deliveries (one
 * payment change each) is stored with the workers stopped, as after their outage, then the all-role
 * service starts with one destination and processes and forwards it while a modest paced ingest
 * runs. Not the 1,000 req/s end-to-end row: here ingest takes little of the machine, so the rate is
 * what processing and forwarding get when they have most of it.
 */
export async function runForwardingBacklog(options: {
  database: BenchDatabase;
  backlog: number;
  rate: number;
  env: Record<string, string>;
  postmasterPid?: number;
  log: (line: string) => void;
}): Promise<ForwardingBacklogRun> {
  const { database } = options;
  const loaded = await loadBacklog({
    databaseUrl: database.url,
    sql: database.sql,
    charges: 0,
    prefix: BACKLOG_PREFIX,
    env: {},
    events: chargeSucceededBacklog(BACKLOG_PREFIX, options.backlog, BENCH_SECRET),
  });
  options.log(`  backlog: ${loaded.events} charge.succeeded deliveries stored with their jobs in ${loaded.seconds.toFixed(1)} s, no worker running`);
  const consumer = await startConsumer();
  await resetStatements(database.sql);
  const service = await startInbox(
    database.url,
    { DESTINATION_URL_BENCH: consumer.url, DESTINATION_SECRET_BENCH: consumer.secret, LOG_LEVEL: 'warn', ...options.env },
    'forwarding-backlog',
  );
  try {
    const measured = measureCpu(service.process.pid, options.postmasterPid);
    const ackLatencies: number[] = [];
    let ingestOk = 0;
    for (let chunk = 0; consumer.answeredAt.size < loaded.events && chunk < 600 / CHUNK_SECONDS; chunk += 1) {
      const amount = options.rate * CHUNK_SECONDS;
      const requests = signedDeliveries(`${LIVE_PREFIX}${chunk}_`, amount, BENCH_SECRET);
      const ingest = await runPacedLoad({ baseUrl: service.baseUrl, requests, rate: options.rate, amount, connections: 16 });
      ingestOk += ingest.ok;
      ackLatencies.push(ingest.latencyMs.p99);
    }
    await waitUntil(() => consumer.answeredAt.size >= loaded.events + ingestOk, 300_000);
    const cpu = measured(consumer.answeredAt.size);
    const statements = await readStatements(database.sql);
    const rows = await database.sql<{ id: string; created_ms: number; live: boolean }[]>`
      select id, (extract(epoch from created_at) * 1000)::float8 as created_ms, cause_event_id like ${`${LIVE_PREFIX}%`} as live from payment_events`;
    type Row = (typeof rows)[number];
    const latency = (subset: readonly Row[]) =>
      subset
        .filter((r) => consumer.answeredAt.has(r.id))
        .map((r) => consumer.answeredAt.get(r.id)! - r.created_ms)
        .sort((a, b) => a - b);
    const all = latency(rows);
    const live = latency(rows.filter((r) => r.live));
    const first = Math.min(...rows.map((r) => r.created_ms));
    const last = Math.max(...consumer.answeredAt.values());
    const run: ForwardingBacklogRun = {
      backlogEvents: loaded.events,
      ingestRate: options.rate,
      ingestOk,
      // The worst chunk's p99: a conservative stand-in for the whole ingest's.
      ingestP99Ms: Math.max(0, ...ackLatencies),
      events: all.length,
      eventsPerSecond: all.length / ((last - first) / 1000),
      latencyMs: { p50: round(percentile(all, 50)), p99: round(percentile(all, 99)), max: round(all.at(-1) ?? 0) },
      liveLatencyMs: { p50: round(percentile(live, 50)), p99: round(percentile(live, 99)) },
      repeats: consumer.counts.repeats,
      unverified: consumer.counts.unverified,
      cpu,
      statements,
    };
    options.log(
      `  forwarding a backlog: ${run.events} of ${rows.length} events 2xx (${loaded.events} backlog + ${ingestOk} live), ${run.eventsPerSecond.toFixed(0)} events/s first change → last 2xx; ` +
        `change → 2xx p50 ${run.latencyMs.p50} ms, p99 ${run.latencyMs.p99} ms, max ${run.latencyMs.max} ms (live events p50 ${run.liveLatencyMs.p50} ms, p99 ${run.liveLatencyMs.p99} ms); ${run.repeats} repeats, ${run.unverified} unverified | ` +
        `ingest ${options.rate} req/s paced: ${ingestOk} ok, worst chunk's p99 ack ${run.ingestP99Ms} ms`,
    );
    options.log(
      `    CPU µs per delivered event (processing + forwarding, and the live ingest): service ${cpu.serverUs}, PostgreSQL ${cpu.postgresUs ?? '?'}, bench (sender + consumer) ${cpu.loadGeneratorUs}`,
    );
    if (statements) logStatements(options.log, statements, run.events, 'delivered event');
    return run;
  } finally {
    await service.process.stop();
    await consumer.close();
  }
}
