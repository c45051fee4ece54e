import type { Transaction } from '../db/client.ts';
import { type PaymentEvent, groupByCharge, keysOf } from '../domain/payments/charge-groups.ts';
import { type AppliedPaymentEvent, foldCharges } from '../domain/payments/fold-charges.ts';
import { lockOrCreatePayments } from '../domain/payments/lock-payments.ts';
import { PAYMENT_NOTICE_KIND, paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import { type PaymentChange, insertPaymentEvents } from '../domain/payments/sql/payment-events.ts';
import { insertPaymentTransitions, updatePaymentStates, writeCheckpoints } from '../domain/payments/sql/payments.ts';
import { toStoredFact } from '../domain/payments/stored-fact.ts';
import type { ChargeSnapshot } from '../gateways/shared/gateway-api.ts';
import { AccountDeauthorizedError } from '../refetch/errors.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';
import { type AppliedEvent, type EventHandler, type PreparedEvent, notAPaymentEvent } from './handlers.ts';
import { type CarryOverProgress, carryOverProgress, loadKnownFacts } from './known-facts.ts';
import { chargeToRefetch, paymentEventOf } from './payment-event-of.ts';

export interface PaymentsHandlerDeps {
  /** Re-reads charges for the kinds a provider orders by `refetch`. Without it, every kind is ordered by occurred_at. */
  refetcher?: ChargeRefetcher;
  /** Told each batch's payment changes (status or amounts) inside its transaction (src/delivery queues their deliveries). */
  announceChanges?(tx: Transaction, changes: readonly PaymentChange[]): Promise<void>;
}

/**
 * Every canonical payment kind (and thin notices) goes to the payments domain (src/domain/payments).
 * For a kind ordered by `refetch`, `prepare` reads the charge from the gateway API, outside any
 * transaction: the event is then a notice and the snapshot is what it means. `apply` is
 * applyPaymentBatch.
 */
export function createPaymentsHandler(deps: PaymentsHandlerDeps): EventHandler {
  const carryOver = carryOverProgress();
  return {
    name: 'payments',
    kinds: [...paymentStatuses.map(paymentKind), PAYMENT_NOTICE_KIND],
    async prepare(event, signal): Promise<ChargeSnapshot | undefined> {
      const chargeId = chargeToRefetch(event, deps.refetcher);
      if (chargeId === undefined) return undefined;
      try {
        // On behalf of the event's account: a Connect account's (Stripe-Account), an Asaas subaccount's (its own key).
        return await deps.refetcher!.fetchCharge(event.provider.name, chargeId, signal, event.stored.account);
      } catch (error) {
        // The account deauthorized the platform: its charges cannot be read, but its webhooks
        // still say what happened, so the event is folded from its payload (docs/accounts.md).
        if (error instanceof AccountDeauthorizedError) return undefined;
        throw error;
      }
    },
    apply: (tx, batch) => applyPaymentBatch(tx, batch, { announceChanges: deps.announceChanges, carryOver }),
  };
}

/**
 * The payments steps of a batch, inside its transaction (applyBatch in apply-batch.ts opened it
 * and locked the inbox rows; it marks them and COMMITs after): a statement or two per step for
 * the whole batch, whatever its size. Each event's meaning is handed back to be kept on its inbox
 * row, from where the database keeps it in payment_facts (so later folds see a gateway read
 * again, whatever becomes of the row).
 */
async function applyPaymentBatch(
  tx: Transaction,
  batch: readonly PreparedEvent[],
  deps: Pick<PaymentsHandlerDeps, 'announceChanges'> & { carryOver: CarryOverProgress },
): Promise<AppliedEvent[]> {
  const events = batch.map(paymentEventOf);
  const charges = groupByCharge(events.filter((event) => event !== undefined));
  if (charges.byCharge.size === 0) return settledEvents(batch, events, []);
  const payments = await lockOrCreatePayments(tx, charges);
  // Only once the payment rows are locked: read before, it could miss a fact another transaction
  // committed in between, and the fold would then overwrite that transaction's result.
  const known = await loadKnownFacts(tx, keysOf(charges), providersOf(batch), deps.carryOver);
  const folded = foldCharges(charges, payments, known);
  await writeCheckpoints(tx, folded.checkpoints);
  await updatePaymentStates(tx, folded.updates);
  await insertPaymentTransitions(tx, folded.transitions);
  await insertPaymentEvents(tx, folded.changes);
  // The push side queues its deliveries here, after their payment_events rows: they commit together.
  if (folded.changes.length > 0) await deps.announceChanges?.(tx, folded.changes);
  return settledEvents(batch, events, folded.outcomes);
}

/** The configured providers of the batch's events (their drivers read a payload the carry-over has not reached). */
function providersOf(batch: readonly PreparedEvent[]) {
  return new Map(batch.map(({ event }) => [event.provider.name, event.provider]));
}

/** Each event's outcome, decision and fact, in batch order; `outcomes` are those of the payment events, in the same order. */
function settledEvents(
  batch: readonly PreparedEvent[],
  events: readonly (PaymentEvent | undefined)[],
  outcomes: readonly AppliedPaymentEvent[],
): AppliedEvent[] {
  let next = 0;
  return batch.map(({ event }, position) => {
    const paymentEvent = events[position];
    if (!paymentEvent) return notAPaymentEvent(event.kind);
    const { outcome, decision } = outcomes[next++]!;
    return { outcome, fact: toStoredFact(paymentEvent.fact), decision };
  });
}
