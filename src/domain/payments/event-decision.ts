import type { EventDecisionName } from '../../db/schema.ts';
import { type FoldResult, type KnownFact, type PaymentState, type Refusal, samePayment, sameState } from './fold.ts';
import { type InquiryChange, type PaymentFact, type PaymentKind, type PaymentStatus, paymentKind } from './payment-fact.ts';

/**
 * Why an event left its payment as it did, kept on its inbox row (webhook_inbox.decision and
 * decision_detail). `detail` is JSON: what an operator needs to check the decision by hand.
 */
export type EventDecision =
  /**
   * The payment changed: `from` → `to` (the same status when only the amounts moved). `from` null:
   * this event created it. `inquiry`: the event opened or closed an inquiry (the status stays).
   */
  | { decision: 'applied'; detail: { from: PaymentStatus | null; to: PaymentStatus; inquiry?: InquiryChange } }
  /** Nothing new: the history already holds it, or newer facts decide (`knownOccurredAt`). */
  | { decision: 'stale'; detail: { status: PaymentStatus; occurredAt: string; knownOccurredAt: string | null } }
  /** The state machine refused `from` → `to` where the event falls in time (refunded → disputed). */
  | { decision: 'rejected_transition'; detail: { from: PaymentStatus; to: PaymentStatus; occurredAt: string } }
  /**
   * Applied, the event would leave more refunded (`amountRefunded`) than the payment's `amount`:
   * a payment no money movement leads to, so the payment stays as it was.
   */
  | { decision: 'rejected_amount'; detail: { status: PaymentStatus; amount: number; amountRefunded: number; occurredAt: string } }
  /** A gateway read (refetch snapshot) observed after the event decided instead of it. */
  | { decision: 'superseded'; detail: { status: PaymentStatus; occurredAt: string; snapshotInboxId: number; observedAt: string } }
  /**
   * The event was a notice: the gateway was read, and what it said is the fact (`status`, at
   * `observedAt`). `changed` false: the payment already was what the gateway said (event `ignored`).
   */
  | { decision: 'refetched'; detail: { observedAt: string; status: PaymentStatus; from: PaymentStatus | null; to: PaymentStatus; changed: boolean } }
  | { decision: Extract<EventDecisionName, 'not_a_payment_event' | 'unknown_payment'>; detail: Record<string, string> };

export interface DecisionInput {
  /** The event's own fact, as it was folded. */
  event: KnownFact;
  /** The payment before the event (null: the event created it). */
  before: PaymentState | null;
  /** null only when no fact could create the payment (each would have been an impossible one). */
  after: PaymentState | null;
  /** The fold that produced `after`, with the event among its facts. */
  fold: FoldResult;
}

/** The snapshot the fold applied last, after the event's own place in it (undefined: none). */
function snapshotAfter(fold: FoldResult, event: KnownFact): KnownFact | undefined {
  const position = fold.applied.indexOf(event);
  return fold.applied.slice(position + 1).findLast((known) => known.fact.snapshot);
}

function superseded(event: KnownFact, snapshot: KnownFact): EventDecision {
  return {
    decision: 'superseded',
    detail: {
      status: event.fact.status,
      occurredAt: event.fact.occurredAt.toISOString(),
      snapshotInboxId: snapshot.inboxId,
      observedAt: snapshot.fact.occurredAt.toISOString(),
    },
  };
}

function stale(event: KnownFact, after: PaymentState): EventDecision {
  return {
    decision: 'stale',
    detail: { status: event.fact.status, occurredAt: event.fact.occurredAt.toISOString(), knownOccurredAt: after.lastGatewayEventAt?.toISOString() ?? null },
  };
}

/** Refused right after a gateway read that is newer than the event: the read already holds it. */
function newerReadBefore(refusal: Refusal, fact: PaymentFact): KnownFact | undefined {
  const by = refusal.after;
  return by?.fact.snapshot && by.fact.occurredAt.getTime() >= fact.occurredAt.getTime() ? by : undefined;
}

/**
 * Reads the decision off the fold itself (which facts it applied, which it refused and against
 * what), never by comparing statuses afterwards: the fold is what decided.
 */
export function decidePaymentEvent({ event, before, after, fold }: DecisionInput): EventDecision {
  const { fact } = event;
  const refusal = fold.refused.get(event);
  if (refusal?.reason === 'amounts') {
    const read = newerReadBefore(refusal, fact);
    if (read && !fact.snapshot) return superseded(event, read);
    return {
      decision: 'rejected_amount',
      detail: { status: fact.status, amount: refusal.amount, amountRefunded: refusal.amountRefunded, occurredAt: fact.occurredAt.toISOString() },
    };
  }
  if (after === null) throw new Error(`the fold of ${fact.chargeId} has no payment, yet did not refuse the event for its amounts`);
  if (fact.snapshot) {
    // A read always moves lastGatewayEventAt to its own time: that records when the gateway was
    // asked, it is no news about the payment, so only status and amounts count as a change.
    const changed = before === null || !samePayment(before, after);
    return {
      decision: 'refetched',
      detail: { observedAt: fact.occurredAt.toISOString(), status: fact.status, from: before?.status ?? null, to: after.status, changed },
    };
  }
  if (before === null || !sameState(before, after)) {
    return { decision: 'applied', detail: { from: before?.status ?? null, to: after.status, ...(fact.inquiry ? { inquiry: fact.inquiry } : {}) } };
  }
  if (refusal === undefined) {
    // Applied in its place, yet the payment is as it was: later facts already decided.
    const snapshot = snapshotAfter(fold, event);
    return snapshot ? superseded(event, snapshot) : stale(event, after);
  }
  const read = newerReadBefore(refusal, fact);
  if (read) return superseded(event, read);
  // The status it already had (a second `paid`, a refund told twice) is no transition, and an
  // inquiry refused is one the payment already has open (or closed): nothing new.
  if (refusal.from === fact.status || fact.inquiry) return stale(event, after);
  return { decision: 'rejected_transition', detail: { from: refusal.from, to: fact.status, occurredAt: fact.occurredAt.toISOString() } };
}

/**
 * Whether the event had an effect (`processed`) or was evaluated and found nothing to change
 * (`ignored`): the decision already says which, so the outcome is read off it.
 */
export function hadEffect(decision: EventDecision): boolean {
  switch (decision.decision) {
    case 'applied':
      return true;
    case 'refetched':
      return decision.detail.changed;
    default:
      return false;
  }
}

/** Money leaves, or may: a refusal of one of these is money nobody is told about. */
const moneyMovingKinds: readonly PaymentKind[] = ['payment.refunded', 'payment.partially_refunded', 'payment.disputed', 'payment.charged_back'];

/** Statuses in which the payment holds money taken: a cancellation refused there may be money given back. */
const holdingMoney: readonly PaymentStatus[] = ['paid', 'partially_refunded', 'disputed'];

/** Every kind rejectedMoneyMovement can answer (the metric's label values, each started at 0). */
export const rejectedMoneyKinds: readonly PaymentKind[] = [...moneyMovingKinds, 'payment.canceled'];

/**
 * The kind of a refused money-moving event (counted in /metrics, alerted on), or undefined. A
 * cancellation refused from a payment holding money counts too: a gateway that says `canceled`
 * of a paid charge (Pagar.me v5 says it of refunds) may have given the money back.
 */
export function rejectedMoneyMovement(decision: EventDecision | undefined): PaymentKind | undefined {
  if (decision?.decision === 'rejected_transition' && decision.detail.to === 'canceled') {
    return holdingMoney.includes(decision.detail.from) ? 'payment.canceled' : undefined;
  }
  if (decision?.decision !== 'rejected_transition' && decision?.decision !== 'rejected_amount') return undefined;
  const kind = paymentKind(decision.decision === 'rejected_transition' ? decision.detail.to : decision.detail.status);
  return moneyMovingKinds.includes(kind) ? kind : undefined;
}
