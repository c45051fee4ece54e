import { type Database, drizzleExecutor } from '../db/client.ts';
import { type ConflictDetails, findConflictsOfEvent } from '../inbox/sql/conflicts.ts';
import type { InboxEventDetail } from '../inbox/sql/event-columns.ts';
import { findEventById, findEventByKey } from '../inbox/sql/find-events.ts';
import { selectEventsWithLiveJobs } from './sweep-pending-events.ts';

export interface EventDetails extends InboxEventDetail {
  /** Whether a processing job is queued, retrying or running for it right now. */
  hasLiveJob: boolean;
  /** Later webhook requests with its id that said something else (kept, not processed). */
  conflicts: ConflictDetails[];
}

/** An event as an operator names it: by its inbox id (what a payment event's cause holds), or by provider and event id. */
export type EventKey = { inboxId: number } | { provider: string; eventId: string };

/** One event, with its live job and its conflicting duplicates (`inboxctl show`). */
export async function findEvent(database: Database, key: EventKey): Promise<EventDetails | null> {
  const db = drizzleExecutor(database);
  const row = 'inboxId' in key ? await findEventById(db, key.inboxId) : await findEventByKey(db, key.provider, key.eventId);
  if (!row) return null;
  const [live, conflicts] = await Promise.all([selectEventsWithLiveJobs(db, [row]), findConflictsOfEvent(db, row.id)]);
  return { ...row, hasLiveJob: live.has(row.id), conflicts };
}
