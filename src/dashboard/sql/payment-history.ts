import type { SqlExecutor } from '../../db/client.ts';
import { dateOf, epochMs } from '../../inbox/sql/statement.ts';

/** One status change of a payment as the dashboard lists it: with the inbox event behind it (the domain's PaymentTransition is the change alone). */
export interface PaymentHistoryEntry {
  id: number;
  inboxId: number;
  fromStatus: string | null;
  toStatus: string;
  createdAt: Date;
  /** Null once retention has purged the inbox row; the history outlives it. */
  eventId: string | null;
  eventType: string | null;
}

/** A payment's status history, oldest first, with the inbox event behind each change. */
export async function selectPaymentHistory(db: SqlExecutor, paymentId: number): Promise<PaymentHistoryEntry[]> {
  const { rows } = await db.executeSql<Omit<PaymentHistoryEntry, 'createdAt'> & { createdAtMs: number }>(
    `select t.id::float8 as "id", t.inbox_id::float8 as "inboxId", t.from_status as "fromStatus", t.to_status as "toStatus",
            ${epochMs('t.created_at')} as "createdAtMs", i.event_id as "eventId", i.event_type as "eventType"
     from payment_transitions t left join webhook_inbox i on i.id = t.inbox_id
     where t.payment_id = $1
     order by t.id`,
    [paymentId],
  );
  return rows.map(({ createdAtMs, ...entry }) => ({ ...entry, createdAt: dateOf(createdAtMs) }));
}
