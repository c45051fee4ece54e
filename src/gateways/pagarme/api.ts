import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import { isAuthorizedPendingCapture, paidBeforeCancellation } from './webhook-driver.ts';
import {
  type ChargeState,
  type GatewayApi,
  GatewayResponseShapeError,
  asRecord,
  basicAuthorization,
  pathSegment,
  refundStatus,
  requireMinorUnits,
  requireString,
} from '../shared/gateway-api.ts';
import { upperCurrency } from '../shared/payment-facts.ts';
import { pagarmeChargeSplit } from './split.ts';

/**
 * Pagar.me Core API v5: `GET /core/v5/charges/{id}` with HTTP Basic auth, the secret key (sk_…,
 * sk_test_… for the simulator) as user name and an empty password. Test and production share
 * the host https://api.pagar.me: the key decides (docs.pagar.me "Autenticação").
 *
 * Fields (pagarme-nodejs-sdk GetChargeResponse): `amount`, `paid_amount` and `canceled_amount`
 * are integer cents, the amount on every charge (a shape error without it), the other two absent
 * or null until paid / canceled; `status` is pending | processing | paid | overpaid | underpaid | canceled |
 * failed | chargedback (the last one only for PSP accounts, since 2022-09-12).
 *
 * Mapping: pending/processing → pending, or authorized when the last transaction is
 * `authorized_pending_capture` (an auth-only card charge awaiting capture) or `partial_void` (part of
 * that hold released); paid/overpaid/underpaid → paid (an overpaid charge's amount is what was paid), or partially_refunded
 * when part was canceled (v5 refunds a paid charge by cancelling it, in part or whole);
 * canceled → refunded when money had been paid (paidBeforeCancellation: the refunded charge Pagar.me
 * sends has no paid_amount, its last transaction says `refunded`), canceled otherwise; failed → failed;
 * chargedback → charged_back. UNVERIFIED: that a partial cancellation keeps `status: paid` with
 * `canceled_amount` set (the v4 docs say so for partial refunds; v5 does not say). Disputes are a
 * separate v5 entity, so an open dispute is not visible here: only the final chargeback is.
 */

const GATEWAY = 'pagarme';

/**
 * paid_amount and canceled_amount are optional and nullable in the v5 charge (pagarme-nodejs-sdk
 * GetChargeResponse; absent until the charge is paid / canceled), so absent or null is 0. A value
 * that is there but not integer cents is no answer this mapping knows: read as 0, a partially
 * canceled charge said paid and a paid-then-canceled one said canceled.
 */
function optionalCents(charge: Record<string, unknown>, key: string): number {
  return charge[key] === undefined || charge[key] === null ? 0 : requireMinorUnits(charge, key, GATEWAY);
}

/** `taken`: what was paid, or the amount when the charge no longer says (paid_amount left out). */
function statusOf(charge: Record<string, unknown>, pagarmeStatus: string, taken: number, canceled: number): PaymentStatus {
  switch (pagarmeStatus) {
    case 'pending':
    case 'processing':
      return isAuthorizedPendingCapture(charge) ? 'authorized' : 'pending';
    case 'paid':
    case 'overpaid':
    case 'underpaid':
      return refundStatus(taken, canceled);
    case 'canceled':
      return paidBeforeCancellation(charge) ? refundStatus(taken, canceled > 0 ? canceled : taken) : 'canceled';
    case 'failed':
      return 'failed';
    case 'chargedback':
      return 'charged_back';
    default:
      throw new GatewayResponseShapeError(GATEWAY, `unknown charge status "${pagarmeStatus}"`);
  }
}

export function mapPagarmeCharge(json: unknown): ChargeState {
  const charge = asRecord(json, GATEWAY, 'the charge');
  // Every charge has its amount (integer cents): without it, any cancellation of a charge with no
  // paid_amount would read as all of it. More paid than that (an overpaid boleto) is the payment's
  // amount, as in the webhook mapping (takenAmount): Pagar.me refunds what was paid.
  const paid = optionalCents(charge, 'paid_amount');
  const canceled = optionalCents(charge, 'canceled_amount');
  const amount = Math.max(requireMinorUnits(charge, 'amount', GATEWAY), paid, canceled);
  const taken = paid > 0 ? paid : amount;
  const status = statusOf(charge, requireString(charge, 'status', GATEWAY), taken, canceled);
  // A canceled charge that was never paid returned nothing to anyone.
  const amountRefunded = status === 'refunded' || status === 'partially_refunded' ? (canceled > 0 ? canceled : taken) : 0;
  // The split as the webhooks take it (split.ts): not from a charge something was canceled from,
  // whose last transaction may be the cancellation's.
  const split = canceled === 0 && status !== 'canceled' && status !== 'charged_back' ? pagarmeChargeSplit(charge) : undefined;
  return {
    chargeId: requireString(charge, 'id', GATEWAY),
    status,
    amount,
    amountRefunded,
    currency: upperCurrency(charge.currency),
    ...(split ? { split } : {}),
  };
}

export const pagarmeApi: GatewayApi = {
  name: GATEWAY,
  defaultBaseUrl: 'https://api.pagar.me',
  requiredSettings: [],
  authHeaders: (key) => ({ authorization: basicAuthorization(key) }),
  async readCharge(chargeId, get) {
    return mapPagarmeCharge(await get(`/core/v5/charges/${pathSegment(chargeId)}`));
  },
};
