import type { PaymentStatus } from '../domain/payments/payment-fact.ts';
import {
  type ChargeState,
  type GatewayApi,
  type GatewayGet,
  GatewayResponseShapeError,
  asRecord,
  pathSegment,
  refundStatus,
  requireString,
  upperCurrency,
} from './types.ts';

/**
 * Stripe: `GET /v1/charges/{id}` with `Authorization: Bearer <secret key>` (sk_live_/sk_test_ or a
 * restricted rk_ key with charges:read and disputes:read). Amounts are already minor units.
 *
 * Disputes: current API versions have no `dispute` property on a charge, only `disputed: boolean`
 * (checked against stripe-node's generated types, API 2026-10-28; `dispute` was an expandable id
 * in 2017–2019 versions), so `expand[]=dispute` fails with 400 there. A disputed charge costs a
 * second call, `GET /v1/disputes?charge={id}&limit=1` (lists are newest first), and an expanded
 * `dispute` object is still used when an account pinned to an old version returns one.
 *
 * Mapping: failed → failed; pending → pending; succeeded but not captured → pending (authorised),
 * or canceled once the authorisation was released (Stripe then marks it refunded). Captured: a
 * dispute decides first — lost → charged_back; won, warning_closed (an inquiry that never became
 * a chargeback) and prevented → back to the refund view; any other dispute status → disputed.
 * Refunds: amount_refunded against amount_captured → paid / partially_refunded / refunded.
 */

const GATEWAY = 'stripe';

function wonOrNeverCharged(disputeStatus: string): boolean {
  return disputeStatus === 'won' || disputeStatus === 'warning_closed' || disputeStatus === 'prevented';
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function capturedStatus(charge: Record<string, unknown>, dispute: Record<string, unknown> | undefined): PaymentStatus {
  if (dispute) {
    const disputeStatus = requireString(dispute, 'status', GATEWAY);
    if (disputeStatus === 'lost') return 'charged_back';
    if (!wonOrNeverCharged(disputeStatus)) return 'disputed';
  } else if (charge.disputed === true) {
    return 'disputed';
  }
  const captured = numberOr(charge.amount_captured, numberOr(charge.amount, 0));
  return refundStatus(captured, numberOr(charge.amount_refunded, 0));
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
  else if (charge.captured === false) status = charge.refunded === true ? 'canceled' : 'pending';
  else status = capturedStatus(charge, dispute);
  return {
    chargeId: requireString(charge, 'id', GATEWAY),
    status,
    amount: typeof charge.amount === 'number' ? charge.amount : undefined,
    amountRefunded: numberOr(charge.amount_refunded, 0),
    currency: upperCurrency(charge.currency),
  };
}

async function newestDispute(chargeId: string, get: GatewayGet): Promise<unknown> {
  const list = asRecord(await get(`/v1/disputes?charge=${encodeURIComponent(chargeId)}&limit=1`), GATEWAY, 'the dispute list');
  if (!Array.isArray(list.data)) throw new GatewayResponseShapeError(GATEWAY, 'the dispute list has no "data" array');
  return list.data[0];
}

export const stripeGateway: GatewayApi = {
  name: GATEWAY,
  defaultBaseUrl: 'https://api.stripe.com',
  requiredSettings: [],
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  async readCharge(chargeId, get) {
    const charge = asRecord(await get(`/v1/charges/${pathSegment(chargeId)}`), GATEWAY, 'the charge');
    let dispute: unknown;
    if (typeof charge.dispute === 'object' && charge.dispute !== null) dispute = charge.dispute;
    else if (charge.disputed === true) dispute = await newestDispute(chargeId, get);
    return mapStripeCharge(charge, dispute);
  },
};
