import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import {
  type ChargeState,
  type GatewayApi,
  type GatewayGet,
  GatewayResponseShapeError,
  asRecord,
  pathSegment,
  refundStatus,
  requireMinorUnits,
  requireString,
} from '../shared/gateway-api.ts';
import { upperCurrency } from '../shared/payment-facts.ts';
import { stripeAmountInMinorUnits } from './amounts.ts';

/**
 * Stripe: a payment keyed by a PaymentIntent (pi_…, see ./webhook-driver.ts) is read
 * with `GET /v1/payment_intents/{id}?expand[]=latest_charge`, one call for the intent and the
 * charge that decides it; a payment keyed by a charge (ch_…: Charges API charges, and payments
 * stored before PaymentIntents were the key) with `GET /v1/charges/{id}`. `Authorization: Bearer
 * <secret key>` (sk_live_/sk_test_ or a restricted rk_ key with charges, payment_intents and
 * disputes read). Amounts are already minor units.
 *
 * Disputes: current API versions have no `dispute` property on a charge, only `disputed: boolean`
 * (checked against stripe-node's generated types, API 2026-10-28; `dispute` was an expandable id
 * in 2017–2019 versions), so `expand[]=dispute` fails with 400 there. A disputed charge costs a
 * second call, `GET /v1/disputes?charge={id}&limit=1` (lists are newest first), and an expanded
 * `dispute` object is still used when an account pinned to an old version returns one.
 *
 * Charge mapping: failed → failed; pending → pending; succeeded but not captured → authorized,
 * or canceled once the authorisation was voided or lapsed (Stripe then marks it refunded; nothing
 * was taken, so nothing counts as refunded). Captured: a dispute decides first — lost →
 * charged_back; needs_response, under_review (funds withdrawn) → disputed; an inquiry
 * (warning_needs_response, warning_under_review: no funds withdrawn) is the refund view with
 * `inquiryOpen`; won, warning_closed (an inquiry that never became a chargeback) and prevented →
 * the refund view. Refunds: amount_refunded against amount_captured → paid / partially_refunded
 * / refunded. `inquiryOpen` is said only when a dispute was read: whether `disputed` is true on
 * a charge with an open inquiry is not documented (UNVERIFIED), so an undisputed charge's read
 * leaves the inquiry as the webhooks said rather than close it.
 * PaymentIntent mapping: its latest charge, as above (a canceled intent's uncaptured charge is
 * canceled); without a charge, requires_capture → authorized, canceled → canceled, any other
 * status → pending (the webhooks of such an intent are no facts: see ./webhook-driver.ts).
 */

const GATEWAY = 'stripe';

/** Funds withdrawn and not (yet) returned: the payment is disputed or, lost, charged back. */
function withdrawnStatus(disputeStatus: string): PaymentStatus | undefined {
  if (disputeStatus === 'lost') return 'charged_back';
  return disputeStatus === 'needs_response' || disputeStatus === 'under_review' ? 'disputed' : undefined;
}

const isInquiry = (disputeStatus: string) => disputeStatus === 'warning_needs_response' || disputeStatus === 'warning_under_review';

function capturedStatus(charge: Record<string, unknown>, dispute: Record<string, unknown> | undefined): PaymentStatus {
  if (dispute) {
    const withdrawn = withdrawnStatus(requireString(dispute, 'status', GATEWAY));
    if (withdrawn) return withdrawn;
  } else if (charge.disputed === true) {
    return 'disputed';
  }
  // amount_captured is absent on API versions older than the field: the amount stands for it.
  const captured = charge.amount_captured === undefined ? requireMinorUnits(charge, 'amount', GATEWAY) : requireMinorUnits(charge, 'amount_captured', GATEWAY);
  return refundStatus(captured, requireMinorUnits(charge, 'amount_refunded', GATEWAY));
}

/** Stripe's integer in ISO 4217 minor units (./amounts.ts); a fractional ISK króna cannot be one. */
function inMinorUnits(amount: number, currency: string | undefined): number {
  const minor = stripeAmountInMinorUnits(amount, currency);
  if (minor === undefined) throw new GatewayResponseShapeError(GATEWAY, `${amount} is not a whole number of ${currency}'s ISO 4217 minor units`);
  return minor;
}

/** Maps a charge (and, when disputed, its newest dispute) to the canonical state. */
export function mapStripeCharge(chargeJson: unknown, disputeJson?: unknown): ChargeState {
  const charge = asRecord(chargeJson, GATEWAY, 'the charge');
  const dispute = disputeJson === undefined ? undefined : asRecord(disputeJson, GATEWAY, 'the dispute');
  const stripeStatus = requireString(charge, 'status', GATEWAY);
  let status: PaymentStatus;
  if (stripeStatus === 'failed') status = 'failed';
  else if (stripeStatus === 'pending') status = 'pending';
  else if (stripeStatus !== 'succeeded') throw new GatewayResponseShapeError(GATEWAY, `unknown charge status "${stripeStatus}"`);
  else if (charge.captured === false) status = charge.refunded === true ? 'canceled' : 'authorized';
  else status = capturedStatus(charge, dispute);
  // Every charge carries its amount and amount_refunded: an answer without them is not a charge
  // this mapping can read (a snapshot resets the payment, so a guess would overwrite the truth).
  const currency = upperCurrency(charge.currency);
  const amount = inMinorUnits(requireMinorUnits(charge, 'amount', GATEWAY), currency);
  const amountRefunded = inMinorUnits(requireMinorUnits(charge, 'amount_refunded', GATEWAY), currency);
  const inquiryOpen = dispute && isInquiry(requireString(dispute, 'status', GATEWAY));
  return {
    chargeId: requireString(charge, 'id', GATEWAY),
    status,
    amount,
    amountRefunded: charge.captured === false ? 0 : amountRefunded,
    currency,
    ...(inquiryOpen === undefined ? {} : { inquiryOpen }),
  };
}

function intentOnlyStatus(intentStatus: string): PaymentStatus {
  if (intentStatus === 'canceled') return 'canceled';
  return intentStatus === 'requires_capture' ? 'authorized' : 'pending';
}

/** Maps a PaymentIntent (its `latest_charge` expanded) and, when disputed, the charge's newest dispute. */
export function mapStripePaymentIntent(intentJson: unknown, disputeJson?: unknown): ChargeState {
  const intent = asRecord(intentJson, GATEWAY, 'the payment intent');
  const chargeId = requireString(intent, 'id', GATEWAY);
  const intentStatus = requireString(intent, 'status', GATEWAY);
  const charge = intent.latest_charge;
  if (typeof charge === 'string') throw new GatewayResponseShapeError(GATEWAY, 'latest_charge was not expanded');
  if (charge === null || charge === undefined) {
    // Every PaymentIntent carries its integer amount (stripe-node: `amount: number`, not optional):
    // without one this is not an intent, and 0 would overwrite the payment's amount.
    const currency = upperCurrency(intent.currency);
    const amount = inMinorUnits(requireMinorUnits(intent, 'amount', GATEWAY), currency);
    return { chargeId, status: intentOnlyStatus(intentStatus), amount, amountRefunded: 0, currency };
  }
  const state = mapStripeCharge(charge, disputeJson);
  const lapsed = intentStatus === 'canceled' && (state.status === 'pending' || state.status === 'authorized');
  return { ...state, chargeId, status: lapsed ? 'canceled' : state.status };
}

/** A disputed charge's dispute: expanded on old API versions, else the newest one listed. */
async function disputeOf(charge: Record<string, unknown>, get: GatewayGet): Promise<unknown> {
  if (typeof charge.dispute === 'object' && charge.dispute !== null) return charge.dispute;
  return charge.disputed === true ? newestDispute(requireString(charge, 'id', GATEWAY), get) : undefined;
}

async function newestDispute(chargeId: string, get: GatewayGet): Promise<unknown> {
  const list = asRecord(await get(`/v1/disputes?charge=${encodeURIComponent(chargeId)}&limit=1`), GATEWAY, 'the dispute list');
  if (!Array.isArray(list.data)) throw new GatewayResponseShapeError(GATEWAY, 'the dispute list has no "data" array');
  return list.data[0];
}

export const stripeApi: GatewayApi = {
  name: GATEWAY,
  defaultBaseUrl: 'https://api.stripe.com',
  requiredSettings: [],
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  // A connected account's objects are read with the platform's key and the account named in this
  // header (docs.stripe.com/connect/authentication); without it Stripe looks in the platform's own account.
  accountHeaders: (account) => ({ 'stripe-account': account }),
  async readCharge(chargeId, get) {
    if (chargeId.startsWith('pi_')) {
      const intent = asRecord(await get(`/v1/payment_intents/${pathSegment(chargeId)}?expand[]=latest_charge`), GATEWAY, 'the payment intent');
      const charge =
        typeof intent.latest_charge === 'object' && intent.latest_charge !== null ? asRecord(intent.latest_charge, GATEWAY, 'the latest charge') : undefined;
      return mapStripePaymentIntent(intent, charge && (await disputeOf(charge, get)));
    }
    const charge = asRecord(await get(`/v1/charges/${pathSegment(chargeId)}`), GATEWAY, 'the charge');
    return mapStripeCharge(charge, await disputeOf(charge, get));
  },
};
