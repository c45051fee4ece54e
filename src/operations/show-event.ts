import { type Database, drizzleExecutor } from '../db/client.ts';
import { type ConflictDetails, findConflictsOfEvent } from '../inbox/sql/conflicts.ts';
import type { InboxEventDetail } from '../inbox/sql/event-columns.ts';
import { findEventByKey } from '../inbox/sql/find-events.ts';
import { selectEventsWithLiveJobs } from './sweep-pending-events.ts';

export interface EventDetails extends InboxEventDetail {
  /** Whether a processing job is queued, retrying or running for it right now. */
  hasLiveJob: boolean;
  /** Later deliveries with its id that said something else (kept, not processed). */
  conflicts: ConflictDetails[];
}

/** One event by its natural key, with its live job and its conflicting duplicates (`inboxctl show`). */
export async function findEvent(database: Database, provider: string, eventId: string): Promise<EventDetails | null> {
  const db = drizzleExecutor(database);
  const row = await findEventByKey(db, provider, eventId);
  if (!row) return null;
  const [live, conflicts] = await Promise.all([selectEventsWithLiveJobs(db, [row]), findConflictsOfEvent(db, row.id)]);
  return { ...row, hasLiveJob: live.has(row.id), conflicts };
}
