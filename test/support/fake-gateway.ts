import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One request the fake gateway received, in arrival order. */
export interface RecordedRequest {
  method: string;
  /** Path with its query string, as sent. */
  path: string;
  /** Path without the query string. */
  pathname: string;
  headers: IncomingMessage['headers'];
  /** performance.now() when the request arrived: for counting requests per window. */
  arrivedAtMs: number;
}

/** An answer, or `hold`: keep the request open until `releaseHeld()` (a slow gateway without sleeps). */
export type FakeAnswer = { status: number; json?: unknown; text?: string; headers?: Record<string, string> } | { hold: true };

/** Returns an answer for requests it wants to shape, undefined to let the next rule (or the resources) answer. */
export type FakeRule = (request: RecordedRequest) => FakeAnswer | undefined;

export interface FakeGateway {
  baseUrl: string;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** The gateway's state: JSON served with 200 at a path (no query); other paths get 404. */
  resources: Map<string, unknown>;
  /** Checked in order before `resources`; the test adds and removes rules to make it fail or stall. */
  rules: FakeRule[];
  /** Requests being held right now. */
  heldCount(): number;
  /** Answers every held request from `resources` (its state at release time). */
  releaseHeld(): void;
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1 standing in for a gateway's API: answers with a given state,
 * can stall (hold), rate-limit (429) or fail (5xx) per request, and records what it received.
 */
export async function startFakeGateway(): Promise<FakeGateway> {
  const requests: RecordedRequest[] = [];
  const resources = new Map<string, unknown>();
  const rules: FakeRule[] = [];
  const held: { request: RecordedRequest; response: ServerResponse }[] = [];
  const sockets = new Set<Socket>();

  function fromResources(request: RecordedRequest): FakeAnswer {
    if (resources.has(request.pathname)) return { status: 200, json: resources.get(request.pathname) };
    return { status: 404, json: { error: { message: `No such resource: ${request.pathname}` } } };
  }

  function send(response: ServerResponse, answer: Exclude<FakeAnswer, { hold: true }>) {
    const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.text ?? '');
    const type = answer.json !== undefined ? 'application/json' : 'text/plain';
    response.writeHead(answer.status, { 'content-type': type, ...answer.headers });
    response.end(body);
  }

  const server = createServer((incoming, response) => {
    const path = incoming.url ?? '/';
    const request: RecordedRequest = {
      method: incoming.method ?? 'GET',
      path,
      pathname: path.split('?')[0] ?? path,
      headers: incoming.headers,
      arrivedAtMs: performance.now(),
    };
    requests.push(request);
    incoming.resume();
    let answer: FakeAnswer | undefined;
    for (const rule of rules) {
      answer = rule(request);
      if (answer) break;
    }
    answer ??= fromResources(request);
    if ('hold' in answer) held.push({ request, response });
    else send(response, answer);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    resources,
    rules,
    heldCount: () => held.length,
    releaseHeld() {
      for (const { request, response } of held.splice(0)) {
        if (!response.destroyed) send(response, fromResources(request) as Exclude<FakeAnswer, { hold: true }>);
      }
    },
    async close() {
      held.splice(0);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The most requests that arrived within any window of `windowMs` (a sliding window over arrivals). */
/**
 * Whether the requests arrived no faster than `limit` per `intervalMs` since `startMs` (performance.now()
 * before the first call): the n-th to arrive (from 0) not before startMs + floor(n / limit) × intervalMs.
 * Arrival is never earlier than sending, so a busy machine (late arrivals, bunched together) cannot
 * fail this; only sending too early can. `toleranceMs` covers the two clocks' granularity.
 */
export function earliestArrivalTooSoon(
  requests: readonly RecordedRequest[],
  startMs: number,
  limit: number,
  intervalMs: number,
  toleranceMs = 20,
): string | undefined {
  const times = requests.map((r) => r.arrivedAtMs).sort((a, b) => a - b);
  for (const [n, time] of times.entries()) {
    const earliest = startMs + Math.floor(n / limit) * intervalMs - toleranceMs;
    if (time < earliest) return `request ${n + 1} arrived ${(time - startMs).toFixed(0)} ms after the start, before ${(earliest - startMs).toFixed(0)} ms`;
  }
  return undefined;
}

export function maxRequestsInWindow(requests: readonly RecordedRequest[], windowMs: number): number {
  const times = requests.map((r) => r.arrivedAtMs).sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= windowMs) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
