import autocannon from 'autocannon';
import type { SignedRequest } from './signed-events.ts';

export interface LoadOptions {
  baseUrl: string;
  requests: SignedRequest[];
  connections: number;
  /** Total requests (the run ends when all are answered). */
  amount: number;
  /** A run still going after this long is stopped and reported as such. */
  maxSeconds: number;
}

export interface LoadResult {
  connections: number;
  rate: number | null;
  sent: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  ok: number;
  errors: number;
  timeouts: number;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  stoppedEarly: boolean;
  /** Paced runs only: how late the sender itself was against its schedule (p99). */
  senderLagMsP99?: number;
}

/**
 * One autocannon run on loopback, bounded by count (and, as a safety net, by time). Every request
 * takes the next pre-signed body from `requests`, so every event id is distinct; signing happens
 * before the clock starts.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.requests.length < options.amount + 2 * options.connections) {
    throw new Error(`need ${options.amount + 2 * options.connections} distinct requests, have ${options.requests.length}`);
  }
  let next = 0;
  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    amount: options.amount,
    // Longer than any commit deadline: a timed-out request could still commit and spoil the row count.
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: '/webhooks/stripe',
        setupRequest: (request) => {
          const delivery = options.requests[next++]!;
          return { ...request, body: delivery.body, headers: { 'content-type': 'application/json', 'stripe-signature': delivery.signature } };
        },
      },
    ],
  });
  // autocannon notices completion on its once-a-second sampling tick, so its own duration is
  // rounded up to whole seconds; the rate here runs from the start to the last answer instead.
  const started = performance.now();
  let lastAnswer = started;
  instance.on('response', () => {
    lastAnswer = performance.now();
  });
  let stoppedEarly = false;
  const guard = setTimeout(() => {
    stoppedEarly = true;
    instance.stop();
  }, options.maxSeconds * 1000);
  const result = await instance;
  clearTimeout(guard);
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    connections: options.connections,
    rate: null,
    sent: result.requests.sent,
    statuses,
    ok: statuses['200'] ?? 0,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: (lastAnswer - started) / 1000,
    requestsPerSecond: answered / ((lastAnswer - started) / 1000),
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.mean },
    stoppedEarly,
  };
}
