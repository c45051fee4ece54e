import type { Transaction } from '../db/client.ts';
import { applyPaymentEvent } from '../domain/payments/apply-payment-event.ts';
import type { KnownFact } from '../domain/payments/fold.ts';
import { PAYMENT_NOTICE_KIND, type PaymentFact, paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import { fromStoredFact, toStoredFact } from '../domain/payments/stored-fact.ts';
import type { ChargeSnapshot } from '../gateways/types.ts';
import type { Refetcher } from '../refetch/refetcher.ts';
import type { EventHandler, InboxEvent } from './handlers.ts';
import { recordEventFact, selectKnownResourceEvents } from './inbox-sql.ts';

/**
 * The charge's other events that have been processed or ignored, as the facts they were processed
 * with (webhook_inbox.fact: a refetched event's snapshot), or read from their payload when none
 * was recorded. Drivers key payment events by their charge (resource_id = the fact's chargeId),
 * which is also what serialises them; a dispute's events carry its charge's id.
 */
async function otherKnownFacts(tx: Transaction, event: InboxEvent): Promise<KnownFact[]> {
  if (event.stored.resourceId === null) return [];
  const rows = await selectKnownResourceEvents(tx, event.stored.provider, event.stored.resourceId, event.inboxId);
  const facts: KnownFact[] = [];
  for (const row of rows) {
    const fact = fromStoredFact(row.fact) ?? event.provider.driver.toPaymentFact(row);
    if (fact) facts.push({ inboxId: row.id, fact });
  }
  return facts;
}

/** A thin notification's charge (Mercado Pago): the driver knows which events are such notices. */
function noticeChargeId(event: InboxEvent): string | null {
  return event.fact ? null : (event.provider.driver.toPaymentNotice?.(event.stored) ?? null);
}

/** The charge to re-read for this event, when its kind is ordered by `refetch` (notices always are). */
function chargeToRefetch(event: InboxEvent, refetcher: Refetcher | undefined): string | undefined {
  if (!refetcher?.has(event.provider.name)) return undefined;
  if (event.fact) return event.provider.refetch.ordering[event.fact.kind] === 'refetch' ? event.fact.chargeId : undefined;
  return noticeChargeId(event) ?? undefined;
}

function snapshotFact(chargeId: string, snapshot: ChargeSnapshot): PaymentFact {
  return {
    kind: paymentKind(snapshot.status),
    // The id this event is keyed by, not the gateway's echo of it (Mercado Pago answers a number).
    chargeId,
    status: snapshot.status,
    occurredAt: snapshot.observedAt,
    amount: snapshot.amount,
    amountRefunded: snapshot.amountRefunded,
    currency: snapshot.currency,
    snapshot: true,
  };
}

export interface PaymentsHandlerDeps {
  /** Re-reads charges for the kinds a provider orders by `refetch`. Without it, every kind is ordered by occurred_at. */
  refetcher?: Refetcher;
}

/**
 * Every canonical payment kind (and thin notices) goes to the payments domain (src/domain/payments).
 * For a kind ordered by `refetch`, `prepare` reads the charge from the gateway API, outside any
 * transaction: the event is then a notice and the snapshot is what it means. `apply` records that
 * meaning on the inbox row (so later folds see the snapshot again) and folds it into the payment.
 */
export function createPaymentsHandler(deps: PaymentsHandlerDeps): EventHandler {
  return {
    name: 'payments',
    kinds: [...paymentStatuses.map(paymentKind), PAYMENT_NOTICE_KIND],
    async prepare(event, signal): Promise<ChargeSnapshot | undefined> {
      const chargeId = chargeToRefetch(event, deps.refetcher);
      return chargeId === undefined ? undefined : deps.refetcher!.fetchCharge(event.provider.name, chargeId, signal);
    },
    async apply(tx, event, context) {
      const snapshot = context as ChargeSnapshot | undefined;
      const chargeId = event.fact?.chargeId ?? noticeChargeId(event);
      const fact = snapshot && chargeId ? snapshotFact(chargeId, snapshot) : event.fact;
      // A notice that could not be re-read tells nothing (no API configured for its provider).
      if (!fact) return 'ignored';
      await recordEventFact(tx, event.inboxId, toStoredFact(fact));
      return applyPaymentEvent(tx, {
        provider: event.stored.provider,
        unknownPayment: event.provider.unknownPayment,
        inboxId: event.inboxId,
        fact,
        loadOtherFacts: (lockedTx) => otherKnownFacts(lockedTx, event),
      });
    },
  };
}

/** Without a refetcher: every payment kind ordered by occurred_at (tests that need no gateway). */
export const paymentsHandler: EventHandler = createPaymentsHandler({});
