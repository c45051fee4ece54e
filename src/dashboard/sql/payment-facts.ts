import type { SqlExecutor } from '../../db/client.ts';
import type { EventDecisionName, InboxStatus } from '../../db/schema.ts';
import { dateOf, epochMs } from '../../inbox/sql/statement.ts';

/** What one gateway event said about a payment, and what processing made of it. */
export interface PaymentFactEntry {
  inboxId: number;
  eventId: string;
  eventType: string;
  occurredAt: Date;
  /** The inbox row's status; null once retention has archived the row (the fact outlives it). */
  status: InboxStatus | null;
  decision: EventDecisionName | null;
  decisionDetail: unknown;
  /** What the event meant when processed: its payment fact, or a gateway read (StoredFact). */
  fact: unknown;
}

/**
 * Every fact known for a payment, in gateway order: payment_facts under its key or the key it was
 * stored under before (a Stripe charge id before PaymentIntents), on their (provider, …) indexes,
 * with the inbox row's status while the row is kept. The one place the payment page reads facts.
 */
export async function selectPaymentFacts(db: SqlExecutor, payment: { provider: string; chargeId: string }, limit: number): Promise<PaymentFactEntry[]> {
  const { rows } = await db.executeSql<{
    inbox_id: number;
    event_id: string;
    event_type: string;
    occurred_at_ms: number;
    status: InboxStatus | null;
    decision: EventDecisionName | null;
    decision_detail: unknown;
    fact: unknown;
  }>(
    `select f.inbox_id::float8 as inbox_id, f.event_id, f.event_type, ${epochMs('f.occurred_at')} as occurred_at_ms, i.status, f.decision, f.decision_detail, f.fact
     from payment_facts f left join webhook_inbox i on i.provider = f.provider and i.event_id = f.event_id
     where f.provider = $1 and (f.payment_key = $2 or f.legacy_key = $2)
     order by f.occurred_at, f.inbox_id limit $3`,
    [payment.provider, payment.chargeId, limit],
  );
  return rows.map((r) => ({
    inboxId: r.inbox_id,
    eventId: r.event_id,
    eventType: r.event_type,
    occurredAt: dateOf(r.occurred_at_ms),
    status: r.status,
    decision: r.decision,
    decisionDetail: r.decision_detail,
    fact: r.fact,
  }));
}
