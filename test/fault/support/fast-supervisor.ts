import { PgBoss } from 'pg-boss';

/**
 * A pg-boss instance that only supervises, every second. A job whose worker died mid-job stays
 * `active` until it has been active longer than the queue's expireInSeconds AND some instance's
 * supervise pass notices (every 60 s by default): correct, but a minute of a test's time per
 * crash. This instance runs pg-boss's own expiry check every second instead, so a test waits
 * expireInSeconds (10 s in the fault tests) rather than a minute. It runs no workers and does not
 * touch the inbox: what it speeds up is pg-boss's failure detection, not the code under test.
 */
export async function startFastSupervisor(databaseUrl: string): Promise<{ stop(): Promise<void> }> {
  const boss = new PgBoss({
    connectionString: databaseUrl,
    max: 2,
    supervise: true,
    schedule: false,
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
    migrate: false,
  });
  boss.on('error', () => {});
  await boss.start();
  return { stop: () => boss.stop({ graceful: false, close: true }) };
}
