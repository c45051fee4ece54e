import type { SqlExecutor } from '../db/client.ts';
import { markEventFailed } from '../inbox/sql/mark-events.ts';
import { describeFinalFailure } from '../queue/final-failure.ts';

/**
 * A job pg-boss dead-lettered: every attempt failed, so the event becomes `failed`, the one inbox
 * status that needs a human. Idempotent (a re-delivered dead-letter job changes nothing) and
 * careful not to touch a row that is no longer pending (a replay may already have fixed it).
 */
export async function failDeadLetteredEvent(db: SqlExecutor, inboxId: number, sourceOutput: unknown): Promise<boolean> {
  return markEventFailed(db, inboxId, describeFinalFailure(sourceOutput));
}
