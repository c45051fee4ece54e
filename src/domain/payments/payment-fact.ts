/** The canonical payment statuses every gateway's vocabulary is mapped onto. */
export const paymentStatuses = [
  'pending',
  'paid',
  'failed',
  'canceled',
  'refunded',
  'partially_refunded',
  'disputed',
  'charged_back',
] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

/** The canonical kind a handler is routed by: `payment.<status>`. */
export type PaymentKind = `payment.${PaymentStatus}`;

/**
 * What one gateway event says about one charge, in canonical terms. Drivers produce it from the
 * stored payload; the payments handler never reads a gateway's raw vocabulary.
 */
export interface PaymentFact {
  kind: PaymentKind;
  chargeId: string;
  status: PaymentStatus;
  occurredAt: Date;
  /** Minor units. */
  amount?: number;
  amountRefunded?: number;
  currency?: string;
}

export function paymentKind(status: PaymentStatus): PaymentKind {
  return `payment.${status}`;
}
