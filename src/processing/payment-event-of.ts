import type { PaymentEvent } from '../domain/payments/charge-groups.ts';
import { type PaymentFact, paymentKind } from '../domain/payments/payment-fact.ts';
import type { ChargeSnapshot } from '../gateways/shared/gateway-api.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';
import type { InboxEvent, PreparedEvent } from './handlers.ts';

/** A thin notification's charge (Mercado Pago): the driver knows which events are such notices. */
function noticeChargeId(event: InboxEvent): string | null {
  return event.fact ? null : (event.provider.driver.toPaymentNotice?.(event.stored) ?? null);
}

/** The charge to re-read for this event, when its kind is ordered by `refetch` (notices always are). */
export function chargeToRefetch(event: InboxEvent, refetcher: ChargeRefetcher | undefined): string | undefined {
  if (!refetcher?.has(event.provider.name)) return undefined;
  if (event.fact) return event.provider.refetch.ordering[event.fact.kind] === 'refetch' ? event.fact.chargeId : undefined;
  return noticeChargeId(event) ?? undefined;
}

function snapshotFact(chargeId: string, snapshot: ChargeSnapshot, legacyChargeId: string | undefined): PaymentFact {
  return {
    kind: paymentKind(snapshot.status),
    // The id this event is keyed by, not the gateway's echo of it (Mercado Pago answers a number).
    chargeId,
    // The webhook's legacy key too: a payment stored under it before the key changed (a Stripe
    // charge id) is this payment, and the snapshot must find that row, not create a second one.
    ...(legacyChargeId === undefined ? {} : { legacyChargeId }),
    status: snapshot.status,
    occurredAt: snapshot.observedAt,
    amount: snapshot.amount,
    amountRefunded: snapshot.amountRefunded,
    currency: snapshot.currency,
    ...(snapshot.inquiryOpen === undefined ? {} : { inquiry: snapshot.inquiryOpen ? 'opened' : 'closed' }),
    ...(snapshot.split === undefined ? {} : { split: snapshot.split }),
    snapshot: true,
  };
}

/**
 * What a prepared event means to the payments domain: the gateway's read of its charge when
 * `prepare` made one (its `context`), else its payload's fact. Undefined: a notice that could not
 * be re-read (no API configured for its provider) tells nothing.
 */
export function paymentEventOf({ event, context }: PreparedEvent): PaymentEvent | undefined {
  const snapshot = context as ChargeSnapshot | undefined;
  const chargeId = event.fact?.chargeId ?? noticeChargeId(event);
  const fact = snapshot && chargeId ? snapshotFact(chargeId, snapshot, event.fact?.legacyChargeId) : event.fact;
  if (!fact) return undefined;
  return {
    provider: event.stored.provider,
    unknownPayment: event.provider.unknownPayment,
    inboxId: event.inboxId,
    account: event.stored.account ?? null,
    fact,
    cause: { eventId: event.stored.eventId, eventType: event.stored.eventType },
  };
}
