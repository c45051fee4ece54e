import type { Transaction } from '../../db/client.ts';
import { PaymentNotYetKnown } from './errors.ts';
import { type KnownFact, type PaymentState, applyFact, foldPaymentFacts, sameState } from './fold.ts';
import type { PaymentFact } from './payment-fact.ts';
import { insertPaymentIfAbsent, insertPaymentTransition, lockPayment, updatePaymentState } from './payment-sql.ts';
import type { PaymentRow } from './schema.ts';

export type UnknownPaymentMode = 'create' | 'require';

export interface PaymentEvent {
  provider: string;
  unknownPayment: UnknownPaymentMode;
  inboxId: number;
  fact: PaymentFact;
  /**
   * Every other fact already known for this charge. Called only once the payment row is locked:
   * read before the lock, it could miss a fact another transaction committed in between, and the
   * fold would then overwrite that transaction's result.
   */
  loadOtherFacts(tx: Transaction): Promise<KnownFact[]>;
}

export type PaymentOutcome = 'processed' | 'ignored';

function stateOf(row: PaymentRow): PaymentState {
  return {
    status: row.status,
    amount: row.amount,
    amountRefunded: row.amountRefunded,
    currency: row.currency,
    lastGatewayEventAt: row.lastGatewayEventAt,
  };
}

/** The state a `require`-mode fold starts from: the row as the application created it. */
function applicationBaseline(row: PaymentRow): PaymentState {
  return {
    status: row.initialStatus ?? row.status,
    amount: row.amount,
    amountRefunded: 0,
    currency: row.currency,
    lastGatewayEventAt: null,
  };
}

interface LockedPayment {
  row: PaymentRow;
  /** Inserted by this transaction, from this event's fact alone. */
  created: boolean;
}

/**
 * Lock first: most events find their payment already there (one statement). In `create` mode a
 * missing row is inserted; losing that race to a concurrent first event means waiting on the
 * unique index until the winner commits, then locking the winner's row.
 */
async function lockOrCreatePayment(tx: Transaction, event: PaymentEvent): Promise<LockedPayment> {
  const { provider, fact } = event;
  const existing = await lockPayment(tx, provider, fact.chargeId);
  if (existing) return { row: existing, created: false };
  if (event.unknownPayment === 'require') throw new PaymentNotYetKnown(provider, fact.chargeId);
  const inserted = await insertPaymentIfAbsent(tx, provider, fact.chargeId, applyFact(null, fact));
  if (inserted) return { row: inserted, created: true };
  const winner = await lockPayment(tx, provider, fact.chargeId);
  if (!winner) throw new Error(`payment ${provider}/${fact.chargeId} conflicted on insert but cannot be read`);
  return { row: winner, created: false };
}

/**
 * Applies one event's fact to its payment inside the caller's transaction: lock (or create) the
 * payment row, fold every known fact of the charge (fold.ts explains why a fold and not a patch),
 * write the result and, when the status moved, one payment_transitions row.
 * `processed` when the payment row changed, `ignored` when the event told nothing new.
 */
export async function applyPaymentEvent(tx: Transaction, event: PaymentEvent): Promise<PaymentOutcome> {
  const { row, created } = await lockOrCreatePayment(tx, event);
  const others = (await event.loadOtherFacts(tx)).filter((known) => known.fact.chargeId === event.fact.chargeId);
  const facts = [...others, { inboxId: event.inboxId, fact: event.fact }];
  const initial = event.unknownPayment === 'require' ? applicationBaseline(row) : null;
  const folded = foldPaymentFacts(initial, facts).state!;
  const before = stateOf(row);
  const changed = !sameState(before, folded);
  if (changed) {
    const initialStatus = event.unknownPayment === 'require' ? (row.initialStatus ?? row.status) : row.initialStatus;
    await updatePaymentState(tx, row.id, folded, initialStatus);
  }
  if (created || before.status !== folded.status) {
    await insertPaymentTransition(tx, {
      paymentId: row.id,
      inboxId: event.inboxId,
      fromStatus: created ? null : before.status,
      toStatus: folded.status,
    });
  }
  return created || changed ? 'processed' : 'ignored';
}
