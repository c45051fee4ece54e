import type { Hono } from 'hono';
import { createApp } from '../../src/http/app.ts';
import type { AppEnv } from '../../src/http/env.ts';
import type { IngestOutcome, Ingestor } from '../../src/inbox/group-commit.ts';
import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { createLogger } from '../../src/logger.ts';
import { testConfig } from './config.ts';

export interface RouteApp {
  /** The service's own app, answering `app.request()` in-process (no socket, no database). */
  app: Hono<AppEnv>;
  /** Every event the route handed to the ingestor, in order. */
  ingested: IncomingEvent[];
}

export interface RouteAppOptions {
  env: Record<string, string>;
  maxBodyBytes?: number;
  /** What the fake ingestor answers; default: every event accepted. */
  ingest?: (event: IncomingEvent) => Promise<IngestOutcome>;
}

/**
 * The app as the service builds it, with providers read from `env` the production way and a fake
 * ingestor in place of the database: for what the route decides before anything is stored.
 */
export function createRouteApp(options: RouteAppOptions): RouteApp {
  const config = testConfig(options.env);
  const ingested: IncomingEvent[] = [];
  const ingestor: Ingestor = {
    ingest(event) {
      ingested.push(event);
      return options.ingest ? options.ingest(event) : Promise.resolve({ kind: 'accepted', inboxId: ingested.length });
    },
  };
  const app = createApp({
    driverFor: (provider) => config.providers.get(provider)?.driver,
    ingestor,
    maxBodyBytes: options.maxBodyBytes ?? config.maxBodyBytes,
    clock: () => new Date(),
    logger: createLogger('silent'),
    pingDatabase: async () => {},
    readinessTimeoutMs: 1000,
    isAcceptingTraffic: () => true,
  });
  return { app, ingested };
}
