import type { SqlExecutor } from '../../db/client.ts';
import type { EventDecisionName, InboxStatus } from '../../db/schema.ts';
import { dateOf, epochMs } from '../../inbox/sql/statement.ts';

/** What one gateway event said about a payment, and what processing made of it. */
export interface PaymentFactEntry {
  inboxId: number;
  eventId: string;
  eventType: string;
  occurredAt: Date;
  receivedAt: Date;
  status: InboxStatus;
  decision: EventDecisionName | null;
  decisionDetail: unknown;
  /** What the event meant when processed (its payment fact, or a gateway read); null before processing. */
  fact: unknown;
}

/**
 * Every fact known for a payment, in gateway order: today the inbox events of its charge and what
 * each meant when processed (webhook_inbox.fact), on the (provider, resource_id) index. The one
 * place the payment page reads facts from: when facts get a table of their own, this is the
 * function that changes.
 */
export async function selectPaymentFacts(db: SqlExecutor, payment: { provider: string; chargeId: string }, limit: number): Promise<PaymentFactEntry[]> {
  const { rows } = await db.executeSql<{ id: number; event_id: string; event_type: string; occurred_at_ms: number; received_at_ms: number; status: InboxStatus; decision: EventDecisionName | null; decision_detail: unknown; fact: unknown }>(
    `select id::float8 as id, event_id, event_type, ${epochMs('occurred_at')} as occurred_at_ms, ${epochMs('received_at')} as received_at_ms,
            status, decision, decision_detail, fact
     from webhook_inbox where provider = $1 and resource_id = $2
     order by webhook_inbox.occurred_at, webhook_inbox.id limit $3`,
    [payment.provider, payment.chargeId, limit],
  );
  return rows.map((r) => ({
    inboxId: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    occurredAt: dateOf(r.occurred_at_ms),
    receivedAt: dateOf(r.received_at_ms),
    status: r.status,
    decision: r.decision,
    decisionDetail: r.decision_detail,
    fact: r.fact,
  }));
}
