import { sql } from 'drizzle-orm';
import { type Db, fromDrizzle, type PgBoss } from 'pg-boss';
import type { StatementRunner, Transaction } from '../db/client.ts';
import { type EnqueueableEvent, WEBHOOKS_QUEUE, webhookJob } from './queues.ts';

export class JobNotCreatedError extends Error {
  readonly code = 'job_not_created';
  constructor(expected: number, created: number) {
    super(`pg-boss created ${created} of ${expected} jobs; rolling back so no inbox row exists without its job.`);
    this.name = 'JobNotCreatedError';
  }
}

/**
 * pg-boss's statements inside the caller's transaction. A postgres.js transaction (the ingest hot
 * path) runs them as named prepared statements: pg-boss's job insert has one text per queue, so
 * after a connection's first batch it is a single Bind/Execute round trip with no parse or plan.
 * drizzle's execute() would send it unprepared (describe, wait, execute: two round trips, planned
 * every time), which the occasional sweeper, replay or breaker re-queue can afford.
 */
function jobDatabase(tx: Transaction | StatementRunner): Db {
  if ('unsafe' in tx) {
    return { executeSql: async (text, values) => ({ rows: await tx.unsafe(text, values as never[], { prepare: true }) }) };
  }
  return fromDrizzle(tx, sql);
}

/**
 * Inserts one processing job per event inside the caller's transaction, so the jobs exist exactly
 * when the rows (or the replay's status change) commit. Every path that (re-)queues an event goes
 * through here: receiving, the sweeper and replays. Jobs are idempotent, so queuing an event that
 * already has a job is harmless.
 */
export async function enqueueWebhookJobs(
  boss: PgBoss,
  tx: Transaction | StatementRunner,
  events: EnqueueableEvent[],
  options: { startAfter?: Date } = {},
): Promise<void> {
  if (events.length === 0) return;
  const jobs = events.map((event) => webhookJob(event, options.startAfter));
  const ids = await boss.insert(WEBHOOKS_QUEUE, jobs, { db: jobDatabase(tx), returnId: true });
  // A null or short answer means pg-boss refused a job (policy, id conflict): never ack without it.
  const created = ids?.length ?? 0;
  if (created !== events.length) throw new JobNotCreatedError(events.length, created);
}
