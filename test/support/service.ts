import type { WorkerConfig } from '../../src/config/config.ts';
import type { DeliveryTimers } from '../../src/delivery/delivery-timers.ts';
import { type Logger, createLogger } from '../../src/logger.ts';
import type { HandlerRegistry } from '../../src/processing/handlers.ts';
import { type RunningService, startService } from '../../src/service.ts';
import type { AppConfig } from '../../src/config/load-config.ts';
import { testConfig } from './config.ts';
import type { TestDatabase } from './database.ts';
import { setup } from './setup.ts';

export interface TestService extends RunningService {
  baseUrl: string;
}

export interface TestServiceOptions {
  database: TestDatabase;
  /** The service's environment, read by loadConfig (test/support/config.ts). */
  env?: Record<string, string>;
  /** Files loadConfig may read (INBOX_CONFIG), by path. */
  files?: Record<string, string>;
  /** Overrides of the test worker settings, after the env is read. */
  worker?: Partial<WorkerConfig>;
  handlers?: HandlerRegistry;
  clock?: () => Date;
  /** The push side's timeouts: pg-boss's TestClock, ticked by the test, instead of real waits. */
  deliveryTimers?: DeliveryTimers;
  /** Default: silent, or TEST_LOG_LEVEL. */
  logger?: Logger;
}

/**
 * The real service (real HTTP on a loopback port, real pg-boss) on a test database, started now.
 * It is stopped at the database's teardown if the test has not stopped it; stop() may be called twice.
 */
export async function startTestService(options: TestServiceOptions): Promise<TestService> {
  const base: AppConfig = testConfig(options.env ?? {}, options.files);
  const config = { ...base, worker: { ...base.worker, ...options.worker } };
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const service = await startService({
    config,
    databaseUrl: options.database.url,
    logger,
    clock: options.clock,
    deliveryTimers: options.deliveryTimers,
    handlers: options.handlers,
  });
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= service.stop());
  options.database.onTeardown(stop);
  return { ...service, stop, baseUrl: `http://127.0.0.1:${service.port}` };
}

/**
 * One service for the whole file: started in a `setup` (after the database's, so register the
 * database first), stopped before the database is dropped. The handle's fields are filled then.
 */
export function useService(options: TestServiceOptions | (() => TestServiceOptions)): TestService {
  const handle = {} as TestService;
  setup(async () => {
    Object.assign(handle, await startTestService(typeof options === 'function' ? options() : options));
  });
  return handle;
}
