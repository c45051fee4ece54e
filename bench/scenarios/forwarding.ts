import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BenchConsumer } from '../support/broker-consumers.ts';
import { startConsumer, waitUntil } from '../support/consumer.ts';
import { type CpuSplit, measureCpu, processCpuMs } from '../support/cpu.ts';
import type { BenchDatabase } from '../support/database.ts';
import { percentile, runPacedLoad } from '../support/paced-load.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';
import { type StatementProfile, logStatements, readStatements, resetStatements } from '../support/statements.ts';

export interface ForwardingRun {
  /** Where the events went: `HTTP` (a local consumer), or the broker a local consumer reads them from. */
  destination: string;
  /** Ingest offered meanwhile (paced), and what it got. */
  ingestRate: number;
  ingestOk: number;
  ingestP99Ms: number;
  events: number;
  /** Events answered 2xx by the consumer (or taken off the broker), from the first payment change to the last. */
  eventsPerSecond: number;
  /** Events answered 2xx ÷ (first → last 2xx): the rate the consumer was served at. */
  deliveriesPerSecond: number;
  /** payment_events.created_at → the consumer's 2xx (or its taking the message off the broker), per event. */
  latencyMs: { p50: number; p99: number; max: number };
  /** Requests the consumer got more than once (same webhook-id). */
  repeats: number;
  unverified: number;
  /**
   * CPU µs per delivered event, from the first ingest request to the last 2xx: the service
   * (ingest, processing and forwarding: one INBOX_ROLE=all process), the PostgreSQL cluster, and
   * the bench process (paced sender and consumer).
   */
  cpu: CpuSplit;
  /** A broker destination: the broker process's CPU µs per delivered event (shared machine: other clients' work included). */
  brokerCpuUs?: number;
  /** The same ingest without a destination (BENCH_FORWARDING_CONTROL=1): what forwarding adds is the difference. */
  control?: { events: number; cpu: CpuSplit };
  statements?: StatementProfile;
}

/** Ingest alone, same load, no destination: the CPU the row's service and PostgreSQL spend without forwarding. */
async function runControl(options: {
  database: BenchDatabase;
  rate: number;
  amount: number;
  env: Record<string, string>;
  postmasterPid?: number;
}): Promise<{ events: number; cpu: CpuSplit }> {
  const service = await startInbox(options.database.url, { LOG_LEVEL: 'warn', ...options.env }, 'forwarding-control');
  try {
    const cpu = measureCpu(service.process.pid, options.postmasterPid);
    const requests = signedDeliveries('evt_bench_control_', options.amount, BENCH_SECRET);
    const ingest = await runPacedLoad({ baseUrl: service.baseUrl, requests, rate: options.rate, amount: options.amount, connections: 64 });
    let events = 0;
    await waitUntil(async () => {
      const [row] = await options.database.sql<{ events: number }[]>`select count(*)::int as events from payment_events`;
      events = row?.events ?? 0;
      return events >= ingest.ok;
    }, 300_000);
    return { events, cpu: cpu(events) };
  } finally {
    await service.process.stop();
  }
}

/** The HTTP row's consumer: a local server that verifies every request with `standardwebhooks` and answers 204. */
async function httpConsumer(): Promise<BenchConsumer> {
  const consumer = await startConsumer();
  return {
    label: 'HTTP',
    env: { DESTINATION_URL_BENCH: consumer.url, DESTINATION_SECRET_BENCH: consumer.secret },
    answeredAt: consumer.answeredAt,
    counts: consumer.counts,
    close: consumer.close,
  };
}

/** The destination's INBOX_CONFIG entry (a broker's exchange or stream), in a file the service reads; removed by the returned function. */
async function destinationConfig(consumer: BenchConsumer): Promise<{ env: Record<string, string>; remove: () => Promise<void> }> {
  if (!consumer.options) return { env: {}, remove: async () => {} };
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-forwarding-'));
  const file = path.join(dir, 'inbox.json');
  await writeFile(file, JSON.stringify({ destinations: { bench: consumer.options } }));
  return { env: { INBOX_CONFIG: file }, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The push side while ingest runs: `node src/main.ts` (INBOX_ROLE=all) with one destination, a
 * local consumer in this process that verifies every event with `standardwebhooks` (by default an
 * HTTP server answering 204; or `consumer`, reading a broker the events are published to), and a
 * paced ingest of `charge.succeeded` deliveries (one payment change each). Latency is from the
 * payment change (its payment_events.created_at, the database's clock on this machine) to the
 * consumer answering it (HTTP) or taking it off the broker. With `control`, the same ingest first
 * runs on its own database without a destination.
 */
export async function runForwarding(options: {
  database: BenchDatabase;
  control?: BenchDatabase;
  rate: number;
  amount: number;
  /** Service settings for both runs (tuning: BENCH_FORWARDING_ENV); the product's defaults otherwise. */
  env: Record<string, string>;
  postmasterPid?: number;
  /** Default: the HTTP consumer. */
  consumer?: BenchConsumer;
  log: (line: string) => void;
}): Promise<ForwardingRun> {
  const control = options.control ? await runControl({ ...options, database: options.control }) : undefined;
  const consumer = options.consumer ?? (await httpConsumer());
  const config = await destinationConfig(consumer);
  await resetStatements(options.database.sql);
  const name = consumer.label === 'HTTP' ? 'forwarding' : `forwarding-${consumer.label.split(' ')[0]!.toLowerCase()}`;
  const service = await startInbox(options.database.url, { ...consumer.env, ...config.env, LOG_LEVEL: 'warn', ...options.env }, name);
  try {
    const measured = measureCpu(service.process.pid, options.postmasterPid);
    const brokerBefore = consumer.brokerPid === undefined ? undefined : processCpuMs(consumer.brokerPid);
    const requests = signedDeliveries('evt_bench_forward_', options.amount, BENCH_SECRET);
    const ingest = await runPacedLoad({ baseUrl: service.baseUrl, requests, rate: options.rate, amount: options.amount, connections: 64 });
    await waitUntil(() => consumer.answeredAt.size >= ingest.ok, 300_000);
    const cpu = measured(consumer.answeredAt.size);
    const brokerCpuUs =
      brokerBefore === undefined ? undefined : Math.round(((processCpuMs(consumer.brokerPid!) - brokerBefore) * 1000) / Math.max(1, consumer.answeredAt.size));
    const statements = await readStatements(options.database.sql);
    const rows = await options.database.sql<{ id: string; created_ms: number }[]>`
      select id, (extract(epoch from created_at) * 1000)::float8 as created_ms from payment_events`;
    const latencies = rows
      .filter((r) => consumer.answeredAt.has(r.id))
      .map((r) => consumer.answeredAt.get(r.id)! - r.created_ms)
      .sort((a, b) => a - b);
    const answered = [...consumer.answeredAt.values()];
    const first = Math.min(...rows.map((r) => r.created_ms));
    const last = Math.max(...answered);
    const round = (n: number) => Math.round(n * 10) / 10;
    const run: ForwardingRun = {
      destination: consumer.label,
      ingestRate: options.rate,
      ingestOk: ingest.ok,
      ingestP99Ms: ingest.latencyMs.p99,
      events: latencies.length,
      eventsPerSecond: latencies.length / ((last - first) / 1000),
      deliveriesPerSecond: latencies.length / ((last - Math.min(...answered)) / 1000),
      latencyMs: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1) ?? 0) },
      repeats: consumer.counts.repeats,
      unverified: consumer.counts.unverified,
      cpu,
      ...(brokerCpuUs !== undefined && { brokerCpuUs }),
      control,
      statements,
    };
    const reached = consumer.label === 'HTTP' ? '2xx at the consumer' : `taken off ${consumer.label} by the consumer`;
    options.log(
      `  forwarding (${consumer.label}): ${run.events} of ${rows.length} events ${reached}, ${run.eventsPerSecond.toFixed(0)} events/s (consumer served at ${run.deliveriesPerSecond.toFixed(0)}/s); change → consumer p50 ${run.latencyMs.p50} ms, p99 ${run.latencyMs.p99} ms, max ${run.latencyMs.max} ms; ` +
        `${run.repeats} repeats, ${run.unverified} unverified | ingest ${options.rate} req/s paced: ${ingest.ok} ok, p99 ack ${ingest.latencyMs.p99} ms`,
    );
    const broker = consumer.label === 'HTTP' ? '' : `, ${consumer.label} ${brokerCpuUs ?? '? (no single broker process found)'}`;
    options.log(
      `    CPU µs per delivered event (ingest + processing + forwarding): service ${cpu.serverUs}, PostgreSQL ${cpu.postgresUs ?? '?'}${broker}, bench (sender + consumer) ${cpu.loadGeneratorUs}`,
    );
    if (control) {
      options.log(
        `    control, no destination (${control.events} events): service ${control.cpu.serverUs}, PostgreSQL ${control.cpu.postgresUs ?? '?'} → forwarding adds ${cpu.serverUs - control.cpu.serverUs} + ${(cpu.postgresUs ?? 0) - (control.cpu.postgresUs ?? 0)} µs per event`,
      );
    }
    if (statements) logStatements(options.log, statements, run.events, 'delivered event');
    return run;
  } finally {
    await service.process.stop();
    await consumer.close();
    await config.remove();
  }
}
