import { and, eq, sql } from 'drizzle-orm';
import type { Transaction } from '../../db/client.ts';
import type { PaymentState } from './fold.ts';
import type { PaymentStatus } from './payment-fact.ts';
import { type PaymentRow, paymentTransitions, payments } from './schema.ts';

/**
 * `create` mode: the row, inserted by this transaction, or nothing when it already exists. The
 * unique index decides; a concurrent inserter waits on it until this transaction ends, then finds
 * the row with lockPayment. An inserted row is locked by its inserter until COMMIT.
 */
export async function insertPaymentIfAbsent(tx: Transaction, provider: string, chargeId: string, state: PaymentState): Promise<PaymentRow | undefined> {
  const [row] = await tx
    .insert(payments)
    .values({ provider, gatewayChargeId: chargeId, ...state })
    .onConflictDoNothing({ target: [payments.provider, payments.gatewayChargeId] })
    .returning();
  return row;
}

/** The payment row, locked until the transaction ends: folds of one charge never interleave. */
export async function lockPayment(tx: Transaction, provider: string, chargeId: string): Promise<PaymentRow | undefined> {
  const [row] = await tx
    .select()
    .from(payments)
    .where(and(eq(payments.provider, provider), eq(payments.gatewayChargeId, chargeId)))
    .for('update');
  return row;
}

export async function updatePaymentState(tx: Transaction, id: number, state: PaymentState, initialStatus: PaymentStatus | null): Promise<void> {
  await tx
    .update(payments)
    .set({ ...state, initialStatus, updatedAt: sql`now()` })
    .where(eq(payments.id, id));
}

export interface PaymentTransition {
  paymentId: number;
  inboxId: number;
  fromStatus: PaymentStatus | null;
  toStatus: PaymentStatus;
}

export async function insertPaymentTransition(tx: Transaction, transition: PaymentTransition): Promise<void> {
  await tx.insert(paymentTransitions).values(transition);
}
