import type { SqlExecutor } from '../../db/client.ts';

/**
 * The payment the event touched: the one its transitions name, else the one of its resource.
 * The row comes back as JSON so the page shows every column the domain table has, whatever
 * columns later migrations add.
 */
export async function selectPaymentOfEvent(
  db: SqlExecutor,
  event: { id: number; provider: string; resourceId: string | null },
): Promise<{ id: number; row: Record<string, unknown> } | undefined> {
  const { rows } = await db.executeSql<{ id: number; row: Record<string, unknown> }>(
    `select p.id::float8 as id, to_jsonb(p) as row from payments p
     where p.id = coalesce(
       (select payment_id from payment_transitions where inbox_id = $1 order by id limit 1),
       (select id from payments where provider = $2 and gateway_charge_id = $3))`,
    [event.id, event.provider, event.resourceId],
  );
  return rows[0];
}

/** One status change of a payment as the event page lists it: with the inbox event behind it (the domain's PaymentTransition is the change alone). */
export interface PaymentHistoryEntry {
  id: number;
  inboxId: number;
  fromStatus: string | null;
  toStatus: string;
  createdAt: string;
  /** Null once retention has purged the inbox row; the history outlives it. */
  eventId: string | null;
  eventType: string | null;
}

/** A payment's status history, oldest first, with the inbox event behind each change. */
export async function selectPaymentHistory(db: SqlExecutor, paymentId: number): Promise<PaymentHistoryEntry[]> {
  const { rows } = await db.executeSql<PaymentHistoryEntry>(
    `select t.id::float8 as "id", t.inbox_id::float8 as "inboxId", t.from_status as "fromStatus", t.to_status as "toStatus",
            to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') as "createdAt",
            i.event_id as "eventId", i.event_type as "eventType"
     from payment_transitions t left join webhook_inbox i on i.id = t.inbox_id
     where t.payment_id = $1
     order by t.id`,
    [paymentId],
  );
  return rows;
}
