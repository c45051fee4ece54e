import { sql } from 'drizzle-orm';
import type { Transaction } from '../../../db/client.ts';
import type { PaymentState } from '../fold.ts';
import type { PaymentStatus } from '../payment-fact.ts';
import { paymentEvents } from '../schema.ts';

/** A change of one payment's status, amounts or open inquiry, with what caused it: the outbox row it becomes. */
export interface PaymentChange {
  paymentId: number;
  /** Its number in the payment's events: 1, 2, 3, … without gaps (payments.event_sequence + 1, + 2, … of the locked row). */
  sequence: number;
  /** The payment's event_sequence before this transaction: its last event written before, 0 when none. */
  previousSequence: number;
  provider: string;
  chargeId: string;
  /** The payment's account (payments.account, or its events' when the row has none yet): null for a direct integration. */
  account: string | null;
  /** The status before the change: the same as state.status when only the amounts moved. */
  previousStatus: PaymentStatus | null;
  /** The payment's state right after the change. */
  state: PaymentState;
  occurredAt: Date;
  cause: { inboxId: number; eventId: string; eventType: string };
}

/**
 * Writes the outbox rows of a batch's payment changes, one statement. Their numbers come from the
 * payment rows the caller locked (event_sequence + 1, + 2, …), and the caller's single update of
 * those rows moves event_sequence on by as many (updatePaymentStates): no other transaction can
 * take a number meanwhile, and a rollback takes them back with the rows: no gaps.
 *
 * `txid` is this transaction's id, raised to the payment's previous event's `txid` when that is
 * higher, so the feed's (txid, position) order keeps each payment's events in sequence order. An xid
 * is assigned at a transaction's first write, not when it takes the payment's lock: a batch that
 * locked its inbox rows (and so got xid 99) and then waited for a payment row held by a batch with
 * xid 100 writes that payment's event n + 1 with 99, below event n's 100. The feed reads only
 * below the horizon by this same column (src/api/sql/payment-events-feed.ts), so the raised value
 * stays gap-free: a transaction still running has an xid at or above the horizon, so every row it
 * writes does too.
 */
export async function insertPaymentEvents(tx: Transaction, changes: readonly PaymentChange[]): Promise<void> {
  if (changes.length === 0) return;
  const values = JSON.stringify(
    changes.map((c, ord) => ({
      ord,
      payment_id: c.paymentId,
      sequence: c.sequence,
      previous_sequence: c.previousSequence,
      provider: c.provider,
      charge_id: c.chargeId,
      account: c.account,
      status: c.state.status,
      previous_status: c.previousStatus,
      amount: c.state.amount,
      amount_refunded: c.state.amountRefunded,
      currency: c.state.currency,
      inquiry_open: c.state.inquiryOpen,
      split: c.state.split,
      occurred_at: c.occurredAt.toISOString(),
      cause_inbox_id: c.cause.inboxId,
      cause_event_id: c.cause.eventId,
      cause_event_type: c.cause.eventType,
    })),
  );
  await tx.execute(sql`
    insert into ${paymentEvents} (payment_id, sequence, txid, provider, gateway_charge_id, account, status, previous_status,
      amount, amount_refunded, currency, inquiry_open, split, occurred_at, cause_inbox_id, cause_event_id, cause_event_type)
    select v.payment_id, v.sequence, greatest(pg_current_xact_id(), previous.txid), v.provider, v.charge_id, v.account,
      v.status, v.previous_status, v.amount, v.amount_refunded, v.currency, v.inquiry_open, v.split, v.occurred_at,
      v.cause_inbox_id, v.cause_event_id, v.cause_event_type
    from jsonb_to_recordset(${values}::jsonb) as v(
      ord int, payment_id bigint, sequence int, previous_sequence int, provider varchar, charge_id varchar, account varchar, status varchar,
      previous_status varchar, amount bigint, amount_refunded bigint, currency varchar, inquiry_open boolean, split jsonb, occurred_at timestamptz,
      cause_inbox_id bigint, cause_event_id varchar, cause_event_type varchar)
    left join ${paymentEvents} as previous on previous.payment_id = v.payment_id and previous.sequence = v.previous_sequence
    order by v.ord`);
}
