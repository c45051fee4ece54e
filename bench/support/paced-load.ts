import { Agent, request } from 'node:http';
import { writeAcksTrace } from './acks-trace.ts';
import type { LoadResult } from './load.ts';
import type { SignedRequest } from './signed-events.ts';

export interface PacedLoadOptions {
  baseUrl: string;
  requests: SignedRequest[];
  /** Requests per second, evenly spaced. */
  rate: number;
  amount: number;
  /** Most connections open at once (a gateway's pool); a request waits for one when all are busy. */
  connections: number;
}

/** Nearest-rank percentile of an ascending array (0 when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * An open-loop sender at a fixed rate: request i is due at start + i/rate, whatever became of the
 * ones before it. autocannon's rate limiter is not that: each connection sends its quota for the
 * second back to back and then waits for the next second, so 1,000 req/s arrives as a burst of
 * 1,000 at the top of every second, and the p99 it reports is the burst's queue. Latency here is
 * from the moment a request was handed to the connection pool to its answer (what a gateway
 * waits for); how late the sender itself was against the schedule is reported beside it.
 */
export async function runPacedLoad(options: PacedLoadOptions): Promise<LoadResult & { senderLagMsP99: number }> {
  const url = new URL(options.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections });
  const latencies: number[] = [];
  const lags: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  const pending: Promise<void>[] = [];
  // Per request, in the order answered: due time (ms after the start), latency, the sender's lateness.
  const acks: [number, number, number][] = [];
  const startedAtEpochMs = Date.now();
  const send = (delivery: SignedRequest, dueMs: number, lagMs: number) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: '/webhooks/stripe',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'stripe-signature': delivery.signature, 'content-length': Buffer.byteLength(delivery.body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            acks.push([dueMs, performance.now() - started, lagMs]);
            statuses[String(res.statusCode)] = (statuses[String(res.statusCode)] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end(delivery.body);
    });
  const start = performance.now();
  const intervalMs = 1000 / options.rate;
  let next = 0;
  while (next < options.amount) {
    const now = performance.now();
    // Everything due by now goes out now: a late timer never lowers the offered rate.
    while (next < options.amount && start + next * intervalMs <= now) {
      const lag = now - (start + next * intervalMs);
      lags.push(lag);
      pending.push(send(options.requests[next]!, next * intervalMs, lag));
      next += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + next * intervalMs - performance.now())));
  }
  await Promise.all(pending);
  await writeAcksTrace(startedAtEpochMs, acks);
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  lags.sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    connections: options.connections,
    rate: options.rate,
    sent: options.amount,
    statuses,
    ok: statuses['200'] ?? 0,
    errors,
    timeouts: 0,
    seconds,
    requestsPerSecond: latencies.length / seconds,
    latencyMs: {
      p50: round(percentile(latencies, 50)),
      p90: round(percentile(latencies, 90)),
      p99: round(percentile(latencies, 99)),
      max: round(latencies.at(-1) ?? 0),
      mean: round(latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)),
    },
    stoppedEarly: false,
    senderLagMsP99: round(percentile(lags, 99)),
  };
}
