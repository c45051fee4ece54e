import { and, eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { type InboxStatus, webhookInbox } from '../db/schema.ts';
import { type ConflictDetails, selectConflictsOfEvent } from './conflicts.ts';
import { selectEventsWithLiveJobs } from './sweep-pending-events.ts';

export interface EventDetails {
  id: number;
  provider: string;
  eventId: string;
  eventType: string;
  resourceId: string | null;
  status: InboxStatus;
  attempts: number;
  lastError: string | null;
  occurredAt: Date;
  receivedAt: Date;
  processedAt: Date | null;
  /** The stored jsonb as PostgreSQL renders it (exact: a JS round trip would round 64-bit ids). */
  payloadJson: string;
  /** The payload holds replacements for what jsonb could not hold (webhook_inbox.payload_lossy); rawBody is exact. */
  payloadLossy: boolean;
  /** The bytes the gateway signed. */
  rawBody: Buffer;
  /** Whether a processing job is queued, retrying or running for it right now. */
  hasLiveJob: boolean;
  /** Later deliveries with its id that said something else (kept, not processed). */
  conflicts: ConflictDetails[];
}

/** One event by its natural key, on the (provider, event_id) unique index. */
export async function findEvent(db: Executor, provider: string, eventId: string): Promise<EventDetails | null> {
  const [row] = await db
    .select({
      id: webhookInbox.id,
      provider: webhookInbox.provider,
      eventId: webhookInbox.eventId,
      eventType: webhookInbox.eventType,
      resourceId: webhookInbox.resourceId,
      status: webhookInbox.status,
      attempts: webhookInbox.attempts,
      lastError: webhookInbox.lastError,
      occurredAt: webhookInbox.occurredAt,
      receivedAt: webhookInbox.receivedAt,
      processedAt: webhookInbox.processedAt,
      payloadJson: sql<string>`${webhookInbox.payload}::text`,
      payloadLossy: webhookInbox.payloadLossy,
      rawBody: webhookInbox.rawBody,
    })
    .from(webhookInbox)
    .where(and(eq(webhookInbox.provider, provider), eq(webhookInbox.eventId, eventId)));
  if (!row) return null;
  const [live, conflicts] = await Promise.all([selectEventsWithLiveJobs(db, [row]), selectConflictsOfEvent(db, row.id)]);
  return { ...row, rawBody: Buffer.from(row.rawBody), hasLiveJob: live.has(row.id), conflicts };
}
