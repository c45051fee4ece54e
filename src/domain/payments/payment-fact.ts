/** The canonical payment statuses every gateway's vocabulary is mapped onto. */
export const paymentStatuses = [
  'pending',
  // Funds held, not captured (Stripe `captured: false`, Asaas AUTHORIZED, …): not money received.
  'authorized',
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
  /** The payment's key at its gateway: the charge's id, or for Stripe the PaymentIntent's when the charge has one. */
  chargeId: string;
  status: PaymentStatus;
  occurredAt: Date;
  /**
   * A key the same payment was stored under before its gateway's key changed (Stripe: the charge
   * id of a PaymentIntent's charge, the key before PaymentIntents were the key). A payment row
   * still under it is this payment, and the facts stored under it are this payment's too.
   */
  legacyChargeId?: string;
  /**
   * The event opened or closed an inquiry: the payer's bank asking about the charge before any
   * dispute (Stripe's `warning_*` disputes). No money moves, so the fold changes the payment's
   * `inquiryOpen` and never its status; `status` is then `paid` (inquiries are opened on captured
   * charges), used only when the inquiry is the first fact known of the payment. See docs/disputes.md.
   * On a snapshot: whether the gateway's read found an open inquiry (absent: the gateway cannot say).
   */
  inquiry?: InquiryChange;
  /** Minor units. */
  amount?: number;
  amountRefunded?: number;
  currency?: string;
  /**
   * The gateway API's answer, not a webhook: the charge's whole state as read at `occurredAt` (the
   * time the request was sent). The fold resets to it instead of running it through the state
   * machine: a snapshot is the gateway's truth, however the webhooks before it were ordered.
   */
  snapshot?: true;
}

export type InquiryChange = 'opened' | 'closed';

/**
 * Routing kind of a thin notification: it says only that a charge changed (Mercado Pago's
 * `payment.updated`); what it means is read from the gateway. Not a status.
 */
export const PAYMENT_NOTICE_KIND = 'payment.notice';

export function paymentKind(status: PaymentStatus): PaymentKind {
  return `payment.${status}`;
}
