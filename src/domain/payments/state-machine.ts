import type { PaymentStatus } from './payment-fact.ts';

/**
 * The one lifecycle every gateway's charge is mapped onto. Terminal statuses (failed, canceled,
 * refunded, charged_back) have no way out; a late `pending` never demotes anything.
 */
const nextStatuses: Record<PaymentStatus, readonly PaymentStatus[]> = {
  pending: ['paid', 'failed', 'canceled'],
  paid: ['refunded', 'partially_refunded', 'disputed'],
  partially_refunded: ['refunded', 'disputed'],
  // A dispute is won (the money stays: back to paid) or lost (charged back).
  disputed: ['paid', 'charged_back'],
  failed: [],
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
 * chain instead of blocking each other.
 */
export const lifecycleRank: Record<PaymentStatus, number> = {
  pending: 0,
  paid: 1,
  failed: 1,
  canceled: 1,
  partially_refunded: 2,
  refunded: 3,
  disputed: 4,
  charged_back: 5,
};
