import { and, asc, eq, sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { type InboxRow, webhookInbox } from '../../db/schema.ts';

export type InboxEventDetail = Pick<
  InboxRow,
  'id' | 'provider' | 'eventId' | 'eventType' | 'resourceId' | 'payload' | 'rawBody' | 'occurredAt' | 'receivedAt' | 'status' | 'attempts' | 'lastError' | 'processedAt' | 'fact'
>;

/** One inbox row by primary key, raw body included (the event page pretty-prints the bytes as sent). */
export async function selectInboxEvent(db: Executor, id: number): Promise<InboxEventDetail | undefined> {
  const [row] = await db
    .select({
      id: webhookInbox.id,
      provider: webhookInbox.provider,
      eventId: webhookInbox.eventId,
      eventType: webhookInbox.eventType,
      resourceId: webhookInbox.resourceId,
      payload: webhookInbox.payload,
      rawBody: webhookInbox.rawBody,
      occurredAt: webhookInbox.occurredAt,
      receivedAt: webhookInbox.receivedAt,
      status: webhookInbox.status,
      attempts: webhookInbox.attempts,
      lastError: webhookInbox.lastError,
      processedAt: webhookInbox.processedAt,
      fact: webhookInbox.fact,
    })
    .from(webhookInbox)
    .where(eq(webhookInbox.id, id));
  return row;
}

export interface ResourceEvent {
  id: number;
  eventId: string;
  eventType: string;
  status: string;
  occurredAt: Date;
  receivedAt: Date;
}

/** Every stored event of one resource, in gateway order: the (provider, resource_id) index. */
export async function selectEventsOfResource(db: Executor, provider: string, resourceId: string, limit: number): Promise<ResourceEvent[]> {
  return db
    .select({
      id: webhookInbox.id,
      eventId: webhookInbox.eventId,
      eventType: webhookInbox.eventType,
      status: webhookInbox.status,
      occurredAt: webhookInbox.occurredAt,
      receivedAt: webhookInbox.receivedAt,
    })
    .from(webhookInbox)
    .where(and(eq(webhookInbox.provider, provider), eq(webhookInbox.resourceId, resourceId)))
    .orderBy(asc(webhookInbox.occurredAt), asc(webhookInbox.id))
    .limit(limit);
}

/**
 * The payment the event touched: the one its transitions name, else the one of its resource.
 * The row comes back as JSON so the page shows every column the domain table has, whatever
 * columns later migrations add.
 */
export async function selectPaymentOfEvent(
  db: Executor,
  event: { id: number; provider: string; resourceId: string | null },
): Promise<{ id: number; row: Record<string, unknown> } | undefined> {
  const rows = await db.execute<{ id: number; row: Record<string, unknown> }>(sql`
    select p.id::float8 as id, to_jsonb(p) as row from payments p
    where p.id = coalesce(
      (select payment_id from payment_transitions where inbox_id = ${event.id} order by id limit 1),
      (select id from payments where provider = ${event.provider} and gateway_charge_id = ${event.resourceId}))`);
  return rows[0];
}

export type PaymentTransition = {
  id: number;
  inboxId: number;
  fromStatus: string | null;
  toStatus: string;
  createdAt: string;
  /** Null once retention has purged the inbox row; the history outlives it. */
  eventId: string | null;
  eventType: string | null;
};

/** A payment's status history, oldest first, with the inbox event behind each change. */
export async function selectPaymentTransitions(db: Executor, paymentId: number): Promise<PaymentTransition[]> {
  const rows = await db.execute<PaymentTransition>(sql`
    select t.id::float8 as "id", t.inbox_id::float8 as "inboxId", t.from_status as "fromStatus", t.to_status as "toStatus",
           to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') as "createdAt",
           i.event_id as "eventId", i.event_type as "eventType"
    from payment_transitions t left join webhook_inbox i on i.id = t.inbox_id
    where t.payment_id = ${paymentId}
    order by t.id`);
  return [...rows];
}
