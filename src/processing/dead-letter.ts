import type { SqlExecutor } from '../db/client.ts';
import { markEventFailed } from '../inbox/sql/mark-events.ts';

/** What pg-boss stored as the final attempt's output: our `{ error }`, or its own serialized error (expiry, shutdown). */
export function describeFinalFailure(sourceOutput: unknown): string {
  if (sourceOutput && typeof sourceOutput === 'object') {
    const output = sourceOutput as { error?: unknown; message?: unknown };
    if (typeof output.error === 'string') return output.error;
    if (typeof output.message === 'string') return `pg-boss: ${output.message}`;
  }
  return 'retries exhausted (pg-boss recorded no error)';
}

/**
 * A job pg-boss dead-lettered: every attempt failed, so the event becomes `failed`, the one inbox
 * status that needs a human. Idempotent (a re-delivered dead-letter job changes nothing) and
 * careful not to touch a row that is no longer pending (a replay may already have fixed it).
 */
export async function failDeadLetteredEvent(db: SqlExecutor, inboxId: number, sourceOutput: unknown): Promise<boolean> {
  return markEventFailed(db, inboxId, describeFinalFailure(sourceOutput));
}
