import { createLogger } from '../../src/logger.ts';
import { type RunningService, startService } from '../../src/service.ts';
import type { AppConfig } from '../../src/runtime/load-config.ts';

export interface TestService extends RunningService {
  baseUrl: string;
}

/** The real service (real HTTP on a loopback port, real pg-boss) against a test database. */
export async function startTestService(config: AppConfig, databaseUrl: string, clock?: () => Date): Promise<TestService> {
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const service = await startService({ config, databaseUrl, logger, clock });
  return { ...service, baseUrl: `http://127.0.0.1:${service.port}` };
}
