import type { PgBoss } from 'pg-boss';
// pg-boss's statement builders: the package has no exports map, and these are the texts its own
// insert() runs, so the embedded insert writes exactly the job row pg-boss would. A private module:
// package.json pins pg-boss exactly, and test/queue/pg-boss-plans-shape.test.ts checks its shape.
// A namespace import, so a builder renamed by an upgrade is the typed error below at start rather
// than a SyntaxError when this module links.
import * as plans from 'pg-boss/dist/plans.js';
import { BOSS_SCHEMA } from './boss.ts';
import { WEBHOOKS_QUEUE } from './queues.ts';
import { CodedError } from '../errors.ts';

/**
 * pg-boss's job insert for the webhooks queue, as a step of a larger statement: the receiver stores
 * a batch's events, claims their keys and queues their jobs in ONE statement (inbox/sql/store-events.ts),
 * which commits on its own, so a batch costs one round trip instead of four (BEGIN, insert, job
 * insert, COMMIT), each of which waited for the event loop with the transaction open.
 */
export interface EmbeddedJobInsert {
  /**
   * `INSERT … RETURNING id` of one job per element of `jobsJson`, an SQL expression of type json
   * holding an array of pg-boss job objects ({ data, singletonKey, … }, as JobInsert).
   */
  insertFrom(jobsJson: string): string;
  /** The queue's NOTIFY (the one boss.insert would send), or null when the queue does not notify. */
  notify: string | null;
}

/**
 * pg-boss reads an insert's jobs from its one parameter, `json_to_recordset($1::text::json)`.
 * Exported for test/queue/pg-boss-plans-shape.test.ts, which says which of these assumptions a
 * pg-boss upgrade broke (package.json pins pg-boss exactly for this file's sake).
 */
export const JOBS_PARAMETER = '$1::text::json';

export class EmbeddedJobInsertError extends CodedError {
  readonly code = 'embedded_job_insert';
  constructor(message: string) {
    super(
      `${message} The receiver cannot queue jobs in its own statement with this pg-boss version; check src/queue/embedded-job-insert.ts against pg-boss's plans.insertJobs.`,
    );
  }
}

/**
 * Built once at start, after the queues exist (ensureQueues): the queue's table and its notify
 * setting are read from pg-boss, as its insert() reads them. Fails loudly at start, never at the
 * first webhook request, if pg-boss's statement no longer has the shape this relies on.
 */
export async function webhookJobInsert(boss: PgBoss): Promise<EmbeddedJobInsert> {
  const queue = await boss.getQueue(WEBHOOKS_QUEUE);
  if (!queue) throw new EmbeddedJobInsertError(`Queue ${WEBHOOKS_QUEUE} does not exist.`);
  const { insertJobs, notifyChannelSql } = plans as Partial<typeof plans>;
  if (typeof insertJobs !== 'function' || typeof notifyChannelSql !== 'function') {
    throw new EmbeddedJobInsertError("pg-boss's dist/plans.js no longer exports insertJobs and notifyChannelSql.");
  }
  const text = insertJobs(BOSS_SCHEMA, { table: queue.table, name: WEBHOOKS_QUEUE, returnId: true, notify: false });
  const pieces = text.split(JOBS_PARAMETER);
  if (pieces.length !== 2) throw new EmbeddedJobInsertError(`pg-boss's job insert no longer reads its jobs from ${JOBS_PARAMETER}.`);
  if (pieces.some((piece) => /\$\d/.test(piece))) throw new EmbeddedJobInsertError("pg-boss's job insert takes parameters besides its jobs.");
  return {
    insertFrom: (jobsJson) => `${pieces[0]}(${jobsJson})${pieces[1]}`,
    notify: queue.notify ? `select pg_notify(${notifyChannelSql(BOSS_SCHEMA)}, '${WEBHOOKS_QUEUE}')` : null,
  };
}
