import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { BenchDatabase } from '../support/database.ts';
import { percentile, runPacedLoad } from '../support/paced-load.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';

export interface ForwardingRun {
  /** Ingest offered meanwhile (paced), and what it got. */
  ingestRate: number;
  ingestOk: number;
  ingestP99Ms: number;
  events: number;
  /** Events answered 2xx by the consumer, from the first payment change to the last 2xx. */
  eventsPerSecond: number;
  /** payment_events.created_at → the consumer's 2xx, per event. */
  latencyMs: { p50: number; p99: number; max: number };
  /** Requests the consumer got more than once (same webhook-id). */
  repeats: number;
  unverified: number;
}


/**
 * The push side while ingest runs: `node src/main.ts` (INBOX_ROLE=all) with one destination, a
 * local consumer in this process that verifies every request with `standardwebhooks` and answers
 * 204, and a paced ingest of `charge.succeeded` deliveries (one payment change each). Latency is
 * from the payment change (its payment_events.created_at, the database's clock on this machine) to
 * the consumer answering it.
 */
export async function runForwarding(options: { database: BenchDatabase; rate: number; amount: number; log: (line: string) => void }): Promise<ForwardingRun> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const webhook = new Webhook(secret);
  const answeredAt = new Map<string, number>();
  let repeats = 0;
  let unverified = 0;
  const consumer = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        webhook.verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>);
      } catch {
        unverified += 1;
        response.writeHead(401).end();
        return;
      }
      const id = String(request.headers['webhook-id']);
      if (answeredAt.has(id)) repeats += 1;
      else answeredAt.set(id, Date.now());
      response.writeHead(204).end();
    });
  });
  consumer.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => consumer.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(consumer.address() as AddressInfo).port}/events`;
  const service = await startInbox(options.database.url, { DESTINATION_URL_BENCH: url, DESTINATION_SECRET_BENCH: secret, LOG_LEVEL: 'warn' }, 'forwarding');
  try {
    const requests = signedDeliveries('evt_bench_forward_', options.amount, BENCH_SECRET);
    const ingest = await runPacedLoad({ baseUrl: service.baseUrl, requests, rate: options.rate, amount: options.amount, connections: 64 });
    const deadline = Date.now() + 300_000;
    while (answeredAt.size < ingest.ok && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    const rows = await options.database.sql<{ id: string; created_ms: number }[]>`
      select id, (extract(epoch from created_at) * 1000)::float8 as created_ms from payment_events`;
    const latencies = rows.filter((r) => answeredAt.has(r.id)).map((r) => answeredAt.get(r.id)! - r.created_ms).sort((a, b) => a - b);
    const first = Math.min(...rows.map((r) => r.created_ms));
    const last = Math.max(...answeredAt.values());
    const round = (n: number) => Math.round(n * 10) / 10;
    const run: ForwardingRun = {
      ingestRate: options.rate,
      ingestOk: ingest.ok,
      ingestP99Ms: ingest.latencyMs.p99,
      events: latencies.length,
      eventsPerSecond: latencies.length / ((last - first) / 1000),
      latencyMs: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1) ?? 0) },
      repeats,
      unverified,
    };
    options.log(
      `  forwarding: ${run.events} of ${rows.length} events 2xx at the consumer, ${run.eventsPerSecond.toFixed(0)} events/s; change → 2xx p50 ${run.latencyMs.p50} ms, p99 ${run.latencyMs.p99} ms, max ${run.latencyMs.max} ms; ` +
        `${repeats} repeats, ${unverified} unverified | ingest ${options.rate} req/s paced: ${ingest.ok} ok, p99 ack ${ingest.latencyMs.p99} ms`,
    );
    return run;
  } finally {
    await service.process.stop();
    await new Promise<void>((resolve) => consumer.close(() => resolve()));
  }
}
