import { and, eq, inArray, isNotNull, ne, or, sql } from 'drizzle-orm';
import type { Executor, Transaction } from '../db/client.ts';
import { type InboxStatus, webhookInbox } from '../db/schema.ts';
import type { StoredEvent } from '../providers/types.ts';
import type { HandlerOutcome } from './handlers.ts';

export interface InboxEventRow extends StoredEvent {
  id: number;
  status: InboxStatus;
  receivedAt: Date;
}

/** A processed row of the same resource, with what it meant when processed (null: not recorded). */
export interface KnownResourceEventRow extends InboxEventRow {
  fact: unknown;
}

const storedEventColumns = {
  id: webhookInbox.id,
  provider: webhookInbox.provider,
  eventId: webhookInbox.eventId,
  eventType: webhookInbox.eventType,
  resourceId: webhookInbox.resourceId,
  occurredAt: webhookInbox.occurredAt,
  payload: webhookInbox.payload,
  receivedAt: webhookInbox.receivedAt,
};

/** Unlocked read, outside the job's transaction: routing and `prepare` need the event first. */
export async function readInboxEvent(db: Executor, id: number): Promise<InboxEventRow | undefined> {
  const [row] = await db
    .select({ ...storedEventColumns, status: webhookInbox.status })
    .from(webhookInbox)
    .where(eq(webhookInbox.id, id));
  return row;
}

/**
 * Locks the row for the rest of the job's transaction and returns its status now. A second job of
 * the same event (sweeper, replay, an expired attempt) waits here, then finds it no longer pending.
 */
export async function lockInboxEvent(tx: Transaction, id: number): Promise<InboxStatus | undefined> {
  const [row] = await tx.select({ status: webhookInbox.status }).from(webhookInbox).where(eq(webhookInbox.id, id)).for('update');
  return row?.status;
}

export async function markEventOutcome(tx: Transaction, id: number, outcome: HandlerOutcome): Promise<void> {
  await tx
    .update(webhookInbox)
    .set({ status: outcome, attempts: sql`${webhookInbox.attempts} + 1`, processedAt: sql`now()`, lastError: null })
    .where(eq(webhookInbox.id, id));
}

/** Inside the job's transaction: the fact the event was processed with (see webhook_inbox.fact). */
export async function recordEventFact(tx: Transaction, id: number, fact: unknown): Promise<void> {
  await tx.update(webhookInbox).set({ fact }).where(eq(webhookInbox.id, id));
}

/**
 * The event waits for something outside it (the gateway API's circuit breaker): the row stays
 * pending with the reason in last_error, and the attempt is not counted, since nothing failed.
 */
export async function noteEventDeferred(db: Executor, id: number, reason: string): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ lastError: reason })
    .where(and(eq(webhookInbox.id, id), eq(webhookInbox.status, 'pending')));
}

/** After a rolled-back attempt, outside that transaction: the attempt still counts, with its error. */
export async function recordFailedAttempt(db: Executor, id: number, error: string): Promise<void> {
  await db
    .update(webhookInbox)
    .set({ attempts: sql`${webhookInbox.attempts} + 1`, lastError: error })
    .where(and(eq(webhookInbox.id, id), eq(webhookInbox.status, 'pending')));
}

/**
 * Retries are exhausted: the row needs a human. The last recorded error is kept; pg-boss's own
 * (expiry, shutdown) fills in when the handler never got to record one. Idempotent.
 */
export async function markEventFailed(db: Executor, id: number, fallbackError: string): Promise<boolean> {
  const rows = await db
    .update(webhookInbox)
    .set({ status: 'failed', lastError: sql`coalesce(${webhookInbox.lastError}, ${fallbackError})` })
    .where(and(eq(webhookInbox.id, id), eq(webhookInbox.status, 'pending')))
    .returning({ id: webhookInbox.id });
  return rows.length > 0;
}

/**
 * The resource's other events whose facts are known: processed or ignored once (processed_at
 * stays set when a replay puts a row back to pending, so replaying never hides a fact the
 * payment already reflects). Served by the (provider, resource_id) index.
 */
export async function selectKnownResourceEvents(tx: Transaction, provider: string, resourceId: string, exceptId: number): Promise<KnownResourceEventRow[]> {
  return tx
    .select({ ...storedEventColumns, status: webhookInbox.status, fact: webhookInbox.fact })
    .from(webhookInbox)
    .where(
      and(
        eq(webhookInbox.provider, provider),
        eq(webhookInbox.resourceId, resourceId),
        ne(webhookInbox.id, exceptId),
        or(inArray(webhookInbox.status, ['processed', 'ignored']), isNotNull(webhookInbox.processedAt)),
      ),
    );
}
