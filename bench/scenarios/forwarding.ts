import { startConsumer, waitUntil } from '../support/consumer.ts';
import { type CpuSplit, measureCpu } from '../support/cpu.ts';
import type { BenchDatabase } from '../support/database.ts';
import { percentile, runPacedLoad } from '../support/paced-load.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';
import { type StatementProfile, logStatements, readStatements, resetStatements } from '../support/statements.ts';

export interface ForwardingRun {
  /** Ingest offered meanwhile (paced), and what it got. */
  ingestRate: number;
  ingestOk: number;
  ingestP99Ms: number;
  events: number;
  /** Events answered 2xx by the consumer, from the first payment change to the last 2xx. */
  eventsPerSecond: number;
  /** Events answered 2xx ÷ (first → last 2xx): the rate the consumer was served at. */
  deliveriesPerSecond: number;
  /** payment_events.created_at → the consumer's 2xx, per event. */
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
  /** The same ingest without a destination (BENCH_FORWARDING_CONTROL=1): what forwarding adds is the difference. */
  control?: { events: number; cpu: CpuSplit };
  statements?: StatementProfile;
}

/** Ingest alone, same load, no destination: the CPU the row's service and PostgreSQL spend without forwarding. */
async function runControl(options: { database: BenchDatabase; rate: number; amount: number; env: Record<string, string>; postmasterPid?: number }): Promise<{ events: number; cpu: CpuSplit }> {
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

/**
 * The push side while ingest runs: `node src/main.ts` (INBOX_ROLE=all) with one destination, a
 * local consumer in this process that verifies every request with `standardwebhooks` and answers
 * 204, and a paced ingest of `charge.succeeded` deliveries (one payment change each). Latency is
 * from the payment change (its payment_events.created_at, the database's clock on this machine) to
 * the consumer answering it. With `control`, the same ingest first runs on its own database
 * without a destination.
 */
export async function runForwarding(options: {
  database: BenchDatabase;
  control?: BenchDatabase;
  rate: number;
  amount: number;
  /** Service settings for both runs (tuning: BENCH_FORWARDING_ENV); the product's defaults otherwise. */
  env: Record<string, string>;
  postmasterPid?: number;
  log: (line: string) => void;
}): Promise<ForwardingRun> {
  const control = options.control ? await runControl({ ...options, database: options.control }) : undefined;
  const consumer = await startConsumer();
  await resetStatements(options.database.sql);
  const service = await startInbox(options.database.url, { DESTINATION_URL_BENCH: consumer.url, DESTINATION_SECRET_BENCH: consumer.secret, LOG_LEVEL: 'warn', ...options.env }, 'forwarding');
  try {
    const measured = measureCpu(service.process.pid, options.postmasterPid);
    const requests = signedDeliveries('evt_bench_forward_', options.amount, BENCH_SECRET);
    const ingest = await runPacedLoad({ baseUrl: service.baseUrl, requests, rate: options.rate, amount: options.amount, connections: 64 });
    await waitUntil(() => consumer.answeredAt.size >= ingest.ok, 300_000);
    const cpu = measured(consumer.answeredAt.size);
    const statements = await readStatements(options.database.sql);
    const rows = await options.database.sql<{ id: string; created_ms: number }[]>`
      select id, (extract(epoch from created_at) * 1000)::float8 as created_ms from payment_events`;
    const latencies = rows.filter((r) => consumer.answeredAt.has(r.id)).map((r) => consumer.answeredAt.get(r.id)! - r.created_ms).sort((a, b) => a - b);
    const answered = [...consumer.answeredAt.values()];
    const first = Math.min(...rows.map((r) => r.created_ms));
    const last = Math.max(...answered);
    const round = (n: number) => Math.round(n * 10) / 10;
    const run: ForwardingRun = {
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
      control,
      statements,
    };
    options.log(
      `  forwarding: ${run.events} of ${rows.length} events 2xx at the consumer, ${run.eventsPerSecond.toFixed(0)} events/s (consumer served at ${run.deliveriesPerSecond.toFixed(0)}/s); change → 2xx p50 ${run.latencyMs.p50} ms, p99 ${run.latencyMs.p99} ms, max ${run.latencyMs.max} ms; ` +
        `${run.repeats} repeats, ${run.unverified} unverified | ingest ${options.rate} req/s paced: ${ingest.ok} ok, p99 ack ${ingest.latencyMs.p99} ms`,
    );
    options.log(`    CPU µs per delivered event (ingest + processing + forwarding): service ${cpu.serverUs}, PostgreSQL ${cpu.postgresUs ?? '?'}, bench (sender + consumer) ${cpu.loadGeneratorUs}`);
    if (control) {
      options.log(`    control, no destination (${control.events} events): service ${control.cpu.serverUs}, PostgreSQL ${control.cpu.postgresUs ?? '?'} → forwarding adds ${cpu.serverUs - control.cpu.serverUs} + ${(cpu.postgresUs ?? 0) - (control.cpu.postgresUs ?? 0)} µs per event`);
    }
    if (statements) logStatements(options.log, statements, run.events, 'delivered event');
    return run;
  } finally {
    await service.process.stop();
    await consumer.close();
  }
}
