import { PgBoss } from 'pg-boss';
import { ensureQueues } from '../../src/queue/queues.ts';
import { testWorkerConfig } from './config.ts';

/** Installs pg-boss's schema and the queues in the template, so clones start ready. */
export async function prepareTemplate(url: string): Promise<void> {
  const boss = new PgBoss({ connectionString: url, max: 2, supervise: false, schedule: false });
  await boss.start();
  await ensureQueues(boss, testWorkerConfig);
  await boss.stop({ graceful: false, close: true });
}
