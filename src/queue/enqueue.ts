import type { PgBoss } from 'pg-boss';
import type { SqlExecutor } from '../db/client.ts';
import { type EnqueueableEvent, WEBHOOKS_QUEUE, webhookJob } from './queues.ts';
import { CodedError } from '../errors.ts';

export class JobNotCreatedError extends CodedError {
  readonly code = 'job_not_created';
  /** `created` undefined: the statement that stored the events counted short and aborted itself. */
  constructor(expected: number, created: number | undefined, options?: ErrorOptions) {
    const count = created === undefined ? `fewer than the ${expected}` : `${created} of ${expected}`;
    super(`pg-boss created ${count} jobs; rolling back so no inbox row exists without its job.`, options);
  }
}

/**
 * Inserts one processing job per event inside the caller's transaction (`tx` is an executor open
 * on it, handed to pg-boss as its `db`), so the jobs exist exactly when the rows (or the replay's
 * status change) commit. Every path that (re-)queues an event goes through here: receiving, the
 * sweeper and replays. Jobs are idempotent, so queuing an event that already has a job is harmless.
 * On the ingest path `tx` is a postgres.js executor: pg-boss's job insert has one text per queue,
 * so as a prepared statement it costs one round trip with no parse or plan.
 */
export async function enqueueWebhookJobs(
  boss: PgBoss,
  tx: SqlExecutor,
  events: EnqueueableEvent[],
  options: { startAfter?: Date; retryLimit?: number } = {},
): Promise<void> {
  if (events.length === 0) return;
  const jobs = events.map((event) => webhookJob(event, options.startAfter, options.retryLimit));
  const ids = await boss.insert(WEBHOOKS_QUEUE, jobs, { db: tx, returnId: true });
  // A null or short answer means pg-boss refused a job (policy, id conflict): never ack without it.
  const created = ids?.length ?? 0;
  if (created !== events.length) throw new JobNotCreatedError(events.length, created);
}
