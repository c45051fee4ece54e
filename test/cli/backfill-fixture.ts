import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import type { HandlerRegistry } from '../../src/processing/handlers.ts';
import type { TestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';

/** What a backfill test works with, filled in by setup() before its tests run. */
export interface BackfillFixture {
  /** The gateway's fake API: the list the backfill pages through, and the refetches. */
  gateway: FakeGateway;
  /** inboxctl's environment: the test database, the provider's secret and API key, INBOX_CONFIG. */
  env: Record<string, string>;
  /** The running service, for webhooks delivered before a backfill. */
  baseUrl: string;
}

export interface BackfillFixtureOptions {
  provider: string;
  /** The provider's INBOX_CONFIG entry beside `driver` (its name) and `api.baseUrl` (the fake). */
  providerConfig?: Record<string, unknown>;
  /** The provider's webhook secret and API key variables. */
  env: Record<string, string>;
  /** Adds the fake API's routes. */
  serve(gateway: FakeGateway): void;
  handlers?: HandlerRegistry;
}

/** A fake gateway API, an INBOX_CONFIG that points the provider at it, and the service running on the test database. */
export function useBackfillService(database: TestDatabase, options: BackfillFixtureOptions): BackfillFixture {
  const fixture = {} as BackfillFixture;
  let configDir: string | undefined;
  setup(async () => {
    fixture.gateway = await startFakeGateway();
    options.serve(fixture.gateway);
    configDir = await mkdtemp(path.join(tmpdir(), `inboxctl-backfill-${options.provider}-`));
    const file = path.join(configDir, 'inbox.json');
    const config = JSON.stringify({
      providers: { [options.provider]: { driver: options.provider, ...options.providerConfig, api: { baseUrl: fixture.gateway.baseUrl } } },
    });
    await writeFile(file, config);
    fixture.env = { DATABASE_URL: database.url, ...options.env, INBOX_CONFIG: file };
    fixture.baseUrl = (await startTestService({ database, env: fixture.env, files: { [file]: config }, handlers: options.handlers })).baseUrl;
  });
  after(async () => {
    await fixture.gateway?.close();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });
  return fixture;
}
