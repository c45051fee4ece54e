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
    server.once('error', reject);
  });
}
