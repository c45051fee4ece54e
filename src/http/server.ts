import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppEnv } from './env.ts';
import { PortUnavailableError, portUnavailable } from './port-errors.ts';

export { PortUnavailableError };

export interface HttpServer {
  port: number;
  /** Stops accepting, lets in-flight requests finish (their 200s still wait for COMMIT), then resolves. */
  close(): Promise<void>;
}

/** The port, taken before anything else starts: requests get a 503 "starting" until `serve`. */
export interface BoundPort extends HttpServer {
  /** From now on `app` answers every request. */
  serve(app: Hono<AppEnv>): void;
}

/**
 * How long an idle keep-alive connection stays open. Load balancers keep theirs to the service open
 * between requests (AWS's ALB 60 s, Google's 600 s) and send the next request on one whenever they
 * like; with Node's default of 5 s the service closed connections they still counted on, and a
 * request sent as one closed was lost in flight: the balancer answered the gateway 502. Longer than
 * the balancer's idle timeout, so the balancer is the side that closes. Shutdown closes idle ones at once.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * The answer while migrations run and workers start: alive (/healthz 200), not ready (everything
 * else 503, which gateways retry and load balancers route around).
 */
function answerWhileStarting(request: Request): Response {
  const headers = { 'content-type': 'application/json', 'retry-after': '5' };
  if (new URL(request.url).pathname === '/healthz') return new Response('{"status":"starting"}', { status: 200, headers });
  return new Response('{"error":{"code":"service_starting","message":"The service is starting; try again in a few seconds."}}', { status: 503, headers });
}

/**
 * Takes PORT on HOST first, so a port another process holds is one line (PortUnavailableError)
 * before the database is touched or a worker starts; the app is attached with `serve` once built.
 */
export function bindPort(port: number, hostname: string): Promise<BoundPort> {
  let answer: (request: Request, bindings: unknown) => Response | Promise<Response> = answerWhileStarting;
  // The bindings (the node request and response) go through to the app: getConnInfo reads the
  // client's socket address from them, and the dashboard's sign-in throttle is per address.
  const server = createAdaptorServer({ fetch: (request: Request, bindings: unknown) => answer(request, bindings), hostname }) as Server;
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Above the keep-alive timeout, so a request arriving as the connection's idle time runs out is
  // never cut off by the header timer (the race Node's documentation warns of).
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return new Promise((resolve, reject) => {
    server.once('error', (error) => reject(portUnavailable(error, port, hostname) ?? error));
    server.listen(port, hostname, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        serve: (app) => {
          answer = (request, bindings) => app.fetch(request, bindings);
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets would hold close() open; busy ones finish their request first.
            server.closeIdleConnections();
          }),
      });
    });
  });
}
