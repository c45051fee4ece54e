import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { type PaymentEventRow, type PaymentRow, paymentEvents, payments, paymentTransitions } from '../../domain/payments/schema.ts';

/** One payment by its key, (provider, gateway charge id): the unique index. */
export async function selectPaymentByCharge(db: Database, provider: string, chargeId: string): Promise<PaymentRow | undefined> {
  const [row] = await db
    .select()
    .from(payments)
    .where(and(eq(payments.provider, provider), eq(payments.gatewayChargeId, chargeId)));
  return row;
}

/** A payment's outbound events in sequence order: the (payment_id, sequence) index. */
export async function selectEventsOfPayment(db: Database, paymentId: number): Promise<PaymentEventRow[]> {
  return db.select().from(paymentEvents).where(eq(paymentEvents.paymentId, paymentId)).orderBy(asc(paymentEvents.sequence));
}

export interface RecordedTransition {
  fromStatus: PaymentRow['status'] | null;
  toStatus: PaymentRow['status'];
  inboxId: number;
  recordedAt: Date;
}

/** A payment's status history as recorded (payment_transitions), oldest first. */
export async function selectTransitionsOfPayment(db: Database, paymentId: number): Promise<RecordedTransition[]> {
  return db
    .select({
      fromStatus: paymentTransitions.fromStatus,
      toStatus: paymentTransitions.toStatus,
      inboxId: paymentTransitions.inboxId,
      recordedAt: paymentTransitions.createdAt,
    })
    .from(paymentTransitions)
    .where(eq(paymentTransitions.paymentId, paymentId))
    .orderBy(asc(paymentTransitions.id));
}
