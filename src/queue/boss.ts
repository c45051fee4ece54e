import { PgBoss } from 'pg-boss';
import type { Logger } from 'pino';
import type { ProcessRole, WorkerConfig } from '../config/config.ts';
import { ensureQueues } from './queues.ts';

export interface BossOptions {
  url: string;
  role: ProcessRole;
  worker: WorkerConfig;
  poolSize: number;
  connectTimeoutSeconds: number;
  logger: Logger;
}

/**
 * pg-boss keeps its own schema (`pgboss`, migrated by pg-boss under its own advisory lock) and its
 * own small node-postgres pool. Receiver-only instances skip maintenance and cron: those belong to
 * the instances that run workers.
 */
export async function startBoss(options: BossOptions): Promise<PgBoss> {
  const runsBackgroundWork = options.role !== 'receiver';
  const boss = new PgBoss({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutSeconds * 1000,
    application_name: 'webhook-inbox:pg-boss',
    useListenNotify: runsBackgroundWork,
    supervise: runsBackgroundWork,
    schedule: runsBackgroundWork,
  });
  // pg-boss reports background failures as events; without a listener they would be thrown away.
  boss.on('error', (error) => options.logger.error({ err: error }, 'pg-boss background error'));
  boss.on('warning', (warning) => options.logger.warn({ warning }, 'pg-boss warning'));
  await boss.start();
  await ensureQueues(boss, options.worker);
  return boss;
}
