import type { PaymentStatus } from './payment-fact.ts';

/**
 * The one lifecycle every gateway's payment is mapped onto. `authorized` is money held, not yet
 * taken: it becomes paid on capture or canceled when the hold is voided or lapses, never counts
 * as paid. A failed attempt is not the end of a payment that takes another attempt (a Stripe
 * PaymentIntent, an Asaas or Pagar.me charge retried): a later authorization or payment moves it
 * on, while a failed payment is never canceled (what a charge-only Stripe integration can see of
 * an abandoned PaymentIntent is its failed charge, so both end `failed`). Canceled, refunded and
 * charged_back have no way out; a late `pending` never demotes anything.
 *
 * Disputes (docs/disputes.md): a paid or partially refunded payment is disputed (funds withdrawn)
 * or charged back directly (Pagar.me, Zoop and Asaas announce some chargebacks with no dispute
 * before them). A dispute is won — back to what the payment was before it (the fold keeps that
 * status in PaymentState.statusBeforeDispute) — or lost (charged back). A refund while a dispute
 * is open is recorded and the dispute stays open: the fold checks it against the status before the
 * dispute. A fully refunded payment is never disputed: Stripe says disputes are not possible on
 * fully refunded card charges, so such an event is refused for an operator to look at.
 * Inquiries move no money and are no status: the fold keeps them beside it (inquiryOpen).
 */
const nextStatuses: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ['authorized', 'paid', 'failed', 'canceled'],
  authorized: ['paid', 'failed', 'canceled'],
  paid: ['refunded', 'partially_refunded', 'disputed', 'charged_back'],
  partially_refunded: ['refunded', 'disputed', 'charged_back'],
  // Won (the payment returns to its status before the dispute), lost, or refunded while open.
  disputed: ['paid', 'charged_back', 'partially_refunded', 'refunded'],
  failed: ['authorized', 'paid'],
  canceled: [],
  refunded: [],
  charged_back: [],
};

export function canTransitionTo(from: PaymentStatus, to: PaymentStatus): boolean {
  return nextStatuses[from].includes(to);
}

/**
 * How far along the lifecycle a status is. Only used to order facts that carry the same
 * `occurred_at` (gateways stamp whole seconds): among the facts that may apply next, the one
 * earliest in the lifecycle goes first, so `pending`+`paid` or `paid`+`refunded` in one second
 * chain instead of blocking each other. A failed attempt ranks before an authorization or a
 * payment of the same second: the attempt that succeeded is the later one.
 */
export const lifecycleRank: Record<PaymentStatus, number> = {
  pending: 0,
  failed: 1,
  authorized: 2,
  paid: 3,
  canceled: 3,
  partially_refunded: 4,
  refunded: 5,
  disputed: 6,
  charged_back: 7,
};
