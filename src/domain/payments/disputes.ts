import type { PaymentFact, PaymentStatus } from './payment-fact.ts';
import { canTransitionTo } from './state-machine.ts';

/**
 * What a dispute, an inquiry or a refund during a dispute does to a payment (docs/disputes.md),
 * beside the plain status transitions of state-machine.ts. Pure: fold.ts asks it for the part of
 * the next state that depends on the dispute, and whether a fact may apply at all.
 */

/** The part of PaymentState a dispute decides. */
export interface DisputeState {
  status: PaymentStatus;
  /** While disputed: what a won dispute returns to (paid, partially_refunded or refunded). */
  statusBeforeDispute: PaymentStatus | null;
  inquiryOpen: boolean;
}

/** The state a fact is applied to: its dispute part and its money. */
interface Before extends DisputeState {
  amount: number | null;
  amountRefunded: number;
}

const isRefund = (status: PaymentStatus) => status === 'refunded' || status === 'partially_refunded';

/** What the money alone says the payment is: nothing, part or all of it refunded. */
function moneyStatus(amount: number | null, amountRefunded: number): PaymentStatus {
  if (amountRefunded <= 0) return 'paid';
  return amount !== null && amountRefunded >= amount ? 'refunded' : 'partially_refunded';
}

/**
 * What a dispute opened now would return to when won. The payment's own status when it says
 * (a partial refund told without its amount still reads partially refunded); else — a dispute
 * that is the first fact known, or a gateway read that says disputed — what its money says.
 */
function statusBeforeDispute(state: Before | null, fact: PaymentFact, amount: number | null, amountRefunded: number): PaymentStatus {
  if (!fact.snapshot && (state?.status === 'paid' || state?.status === 'partially_refunded')) return state.status;
  if (state?.status === 'disputed' && state.statusBeforeDispute !== null && state.amountRefunded === amountRefunded) return state.statusBeforeDispute;
  return moneyStatus(amount, amountRefunded);
}

/**
 * Whether the dispute rules let `fact` apply to `state`; undefined when they have no say (a plain
 * transition, for the state machine). An inquiry applies when it changes the flag; a refund while
 * disputed is checked against the status before the dispute (a further partial refund must raise
 * the amount refunded, as outside a dispute).
 */
export function disputeAllows(state: Before, fact: PaymentFact, refunded: number | undefined): boolean | undefined {
  if (fact.inquiry !== undefined && !fact.snapshot) return state.inquiryOpen !== (fact.inquiry === 'opened');
  if (state.status !== 'disputed' || fact.snapshot || !isRefund(fact.status)) return undefined;
  const before = state.statusBeforeDispute ?? moneyStatus(state.amount, state.amountRefunded);
  if (before === 'partially_refunded' && fact.status === 'partially_refunded') return (refunded ?? 0) > state.amountRefunded;
  return canTransitionTo(before, fact.status);
}

/** The dispute part of the state after `fact`, whose money (`amount`, `amountRefunded`) is already worked out. */
export function disputeStep(state: Before | null, fact: PaymentFact, amount: number | null, amountRefunded: number): DisputeState {
  const inquiryOpen = fact.inquiry !== undefined ? fact.inquiry === 'opened' : (state?.inquiryOpen ?? false);
  // An inquiry moves no money: only its flag changes (a gateway read says the status itself).
  if (fact.inquiry !== undefined && !fact.snapshot && state !== null)
    return { status: state.status, statusBeforeDispute: state.statusBeforeDispute, inquiryOpen };
  if (fact.status === 'disputed') {
    // The dispute is what the inquiry became (Stripe escalates an inquiry in place): it is no longer open as one.
    return {
      status: 'disputed',
      statusBeforeDispute: statusBeforeDispute(state, fact, amount, amountRefunded),
      inquiryOpen: fact.snapshot ? inquiryOpen : false,
    };
  }
  if (state?.status === 'disputed' && !fact.snapshot) {
    // Won: back to what the payment was before the dispute, its refunds kept.
    if (fact.status === 'paid') return { status: state.statusBeforeDispute ?? moneyStatus(amount, amountRefunded), statusBeforeDispute: null, inquiryOpen };
    // Refunded while disputed: the dispute stays open, and a win now returns to the refund.
    if (isRefund(fact.status)) return { status: 'disputed', statusBeforeDispute: fact.status, inquiryOpen };
  }
  const closesInquiry = fact.status === 'charged_back' && !fact.snapshot;
  return { status: fact.status, statusBeforeDispute: null, inquiryOpen: closesInquiry ? false : inquiryOpen };
}
