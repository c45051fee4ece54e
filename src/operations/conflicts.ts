import { and, asc, count, desc, eq, gte, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';
import { webhookInboxConflicts } from '../db/schema.ts';
import type { MeaningDifference } from '../inbox/event-fingerprint.ts';

/** A duplicate delivery of a stored event that said something else (see webhook_inbox_conflicts). */
export interface ConflictDetails {
  id: number;
  receivedAt: Date;
  differences: MeaningDifference[];
  /** The bytes that delivery carried, exactly. */
  rawBody: Buffer;
}

/** The conflicts of one stored event, oldest first, on the inbox_id index. */
export async function selectConflictsOfEvent(db: Executor, inboxId: number): Promise<ConflictDetails[]> {
  const rows = await db
    .select({ id: webhookInboxConflicts.id, receivedAt: webhookInboxConflicts.receivedAt, differences: webhookInboxConflicts.differences, rawBody: webhookInboxConflicts.rawBody })
    .from(webhookInboxConflicts)
    .where(eq(webhookInboxConflicts.inboxId, inboxId))
    .orderBy(asc(webhookInboxConflicts.id));
  return rows.map((row) => ({ ...row, differences: row.differences as MeaningDifference[], rawBody: Buffer.from(row.rawBody) }));
}

export interface ConflictCount {
  provider: string;
  count: number;
  /** The most recent one's event: what to `inboxctl show` first. */
  latestEventId: string;
}

/** Conflicts received since `since` (all time when undefined) per provider, on the received_at index. */
export async function countConflictsByProvider(db: Executor, filter: { provider?: string; since?: Date }): Promise<ConflictCount[]> {
  const rows = await db
    .select({
      provider: webhookInboxConflicts.provider,
      count: count(),
      latestEventId: sql<string>`(array_agg(${webhookInboxConflicts.eventId} order by ${webhookInboxConflicts.receivedAt} desc, ${webhookInboxConflicts.id} desc))[1]`,
    })
    .from(webhookInboxConflicts)
    .where(
      and(
        filter.since ? gte(webhookInboxConflicts.receivedAt, filter.since) : undefined,
        filter.provider ? eq(webhookInboxConflicts.provider, filter.provider) : undefined,
      ),
    )
    .groupBy(webhookInboxConflicts.provider)
    .orderBy(desc(count()), asc(webhookInboxConflicts.provider));
  return rows;
}
