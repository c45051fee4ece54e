import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppEnv } from './env.ts';

export interface HttpServer {
  port: number;
  /** Stops accepting, lets in-flight requests finish (their 200s still wait for COMMIT), then resolves. */
  close(): Promise<void>;
}

/**
 * How long an idle keep-alive connection stays open. Load balancers keep theirs to the service open
 * between requests (AWS's ALB 60 s, Google's 600 s) and send the next request on one whenever they
 * like; with Node's default of 5 s the service closed connections they still counted on, and a
 * request sent as one closed was lost in flight: the balancer answered the gateway 502. Longer than
 * the balancer's idle timeout, so the balancer is the side that closes. Shutdown closes idle ones at once.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export function listen(app: Hono<AppEnv>, port: number, hostname: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname }, (info: AddressInfo) => {
      resolve({
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets would hold close() open; busy ones finish their request first.
            server.closeIdleConnections();
          }),
      });
    }) as Server;
    server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    // Above the keep-alive timeout, so a request arriving as the connection's idle time runs out is
    // never cut off by the header timer (the race Node's documentation warns of).
    server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
    server.once('error', reject);
  });
}
