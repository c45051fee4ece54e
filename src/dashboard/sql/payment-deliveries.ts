import type { SqlExecutor } from '../../db/client.ts';
import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import { dateOf, dateOrNull, epochMs } from '../../inbox/sql/statement.ts';

/** One payment event the application was told (payment_events), oldest first. */
export interface OutboundPaymentEvent {
  id: string;
  sequence: number;
  status: PaymentStatus;
  previousStatus: PaymentStatus | null;
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  createdAt: Date;
  causeInboxId: number;
  causeEventId: string;
}

export async function selectPaymentEvents(db: SqlExecutor, paymentId: number): Promise<OutboundPaymentEvent[]> {
  const { rows } = await db.executeSql<Omit<OutboundPaymentEvent, 'createdAt'> & { createdAtMs: number }>(
    `select id::text as "id", sequence, status, previous_status as "previousStatus", amount::float8 as "amount", amount_refunded::float8 as "amountRefunded",
            currency, ${epochMs('created_at')} as "createdAtMs", cause_inbox_id::float8 as "causeInboxId", cause_event_id as "causeEventId"
     from payment_events where payment_id = $1 order by sequence`,
    [paymentId],
  );
  return rows.map(({ createdAtMs, ...event }) => ({ ...event, createdAt: dateOf(createdAtMs) }));
}

/** Where one destination is with this payment's events (delivery_lanes; absent until its first answer). */
export interface PaymentLane {
  destination: string;
  deliveredSequence: number;
  /** Failures of the head event (deliveredSequence + 1) since the last success. */
  attempts: number;
  parkedAt: Date | null;
  parkedReason: string | null;
  nextAttemptAt: Date | null;
  lastAttemptAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  skippedEvents: number;
}

/**
 * The payment's lane at each of `destinations`: the lanes' key leads with the destination, so the
 * names are given (the configured ones and those with lanes parked or a state, countLanesByDestination).
 */
export async function selectPaymentLanes(db: SqlExecutor, paymentId: number, destinations: readonly string[]): Promise<PaymentLane[]> {
  const { rows } = await db.executeSql<{
    destination: string;
    delivered_sequence: number;
    attempts: number;
    parked_at_ms: number | null;
    parked_reason: string | null;
    next_attempt_at_ms: number | null;
    last_attempt_at_ms: number | null;
    last_status: number | null;
    last_error: string | null;
    skipped_events: number;
  }>(
    `select destination, delivered_sequence, attempts, ${epochMs('parked_at')} as parked_at_ms, parked_reason, ${epochMs('next_attempt_at')} as next_attempt_at_ms,
            ${epochMs('last_attempt_at')} as last_attempt_at_ms, last_status, last_error, skipped_events
     from delivery_lanes where destination = any($2::text[]) and payment_id = $1 order by destination`,
    [paymentId, destinations],
  );
  return rows.map((r) => ({
    destination: r.destination,
    deliveredSequence: r.delivered_sequence,
    attempts: r.attempts,
    parkedAt: dateOrNull(r.parked_at_ms),
    parkedReason: r.parked_reason,
    nextAttemptAt: dateOrNull(r.next_attempt_at_ms),
    lastAttemptAt: dateOrNull(r.last_attempt_at_ms),
    lastStatus: r.last_status,
    lastError: r.last_error,
    skippedEvents: r.skipped_events,
  }));
}
