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
   * How the charge is divided between recipients (Pagar.me's split rules), as the gateway said it
   * when the charge was created, authorized or paid. Absent: the event does not say (most gateways,
   * and cancellations, whose own split is the refund's); the payment keeps the split it had.
   */
  split?: readonly SplitShare[];
  /**
   * The gateway API's answer, not a webhook: the charge's whole state as read at `occurredAt` (the
   * time the request was sent). The fold resets to it instead of running it through the state
   * machine: a snapshot is the gateway's truth, however the webhooks before it were ordered.
   */
  snapshot?: true;
}

export type InquiryChange = 'opened' | 'closed';

/**
 * One recipient's share of a split charge, in the gateway's own terms (Pagar.me v5 `split[]`, v4
 * `split_rules[]`; docs/accounts.md). Exactly one of `amount` (minor units of the payment's
 * currency) and `percentage` (of the charge) is set, as the rule's `type` says. The three flags are
 * null when the gateway did not say them.
 */
export interface SplitShare {
  /** The recipient (`rp_…` in v5, `re_…` in v4). */
  recipientId: string;
  /** The rule's own id at the gateway (`sr_…`), when it has one. */
  ruleId: string | null;
  amount: number | null;
  percentage: number | null;
  /** The recipient answers for chargebacks. */
  liable: boolean | null;
  /** The recipient pays the processing fee. */
  chargeProcessingFee: boolean | null;
  /** The recipient receives what is left after the division (v4: `charge_remainder`). */
  chargeRemainderFee: boolean | null;
}

/** Two splits say the same thing (both absent, or the same shares in the same order). */
export function sameSplit(a: readonly SplitShare[] | null, b: readonly SplitShare[] | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.length === b.length &&
    a.every((share, i) => {
      const other = b[i]!;
      return (
        share.recipientId === other.recipientId &&
        share.ruleId === other.ruleId &&
        share.amount === other.amount &&
        share.percentage === other.percentage &&
        share.liable === other.liable &&
        share.chargeProcessingFee === other.chargeProcessingFee &&
        share.chargeRemainderFee === other.chargeRemainderFee
      );
    })
  );
}

/**
 * Routing kind of a thin notification: it says only that a charge changed (Mercado Pago's
 * `payment.updated`); what it means is read from the gateway. Not a status.
 */
export const PAYMENT_NOTICE_KIND = 'payment.notice';

export function paymentKind(status: PaymentStatus): PaymentKind {
  return `payment.${status}`;
}
