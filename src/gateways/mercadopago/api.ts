import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import {
  type ChargeState,
  type GatewayApi,
  GatewayResponseShapeError,
  asRecord,
  pathSegment,
  refundStatus,
  requireDecimalMinorUnits,
  requireString,
} from '../shared/gateway-api.ts';
import { upperCurrency } from '../shared/payment-facts.ts';

/**
 * Mercado Pago: `GET /v1/payments/{id}` on https://api.mercadopago.com with
 * `Authorization: Bearer <access token>` (mercadopago/sdk-nodejs `clients/payment/get`); TEST-…
 * access tokens reach the same host in test mode.
 *
 * Fields (sdk-nodejs `PaymentResponse`): `id` is a number; `transaction_amount` and
 * `transaction_amount_refunded` are decimals in the currency unit, both on every payment (0
 * refunded until a refund), so an answer without them is a shape error; `currency_id` (BRL, ARS, …);
 * `status` pending | approved | authorized | in_process | in_mediation | rejected | cancelled |
 * refunded | charged_back.
 *
 * Mapping: pending/in_process → pending; authorized (created with capture=false: status_detail
 * pending_capture, funds held until captured or cancelled) → authorized; approved → paid, or partially_refunded while
 * `transaction_amount_refunded` is below the amount (a partial refund leaves the payment approved;
 * status_detail says partially_refunded); in_mediation → disputed; rejected → failed; cancelled →
 * canceled; refunded → refunded; charged_back by its status_detail (the "Get payment status"
 * table): in_process ("in process due to the payer disowning it") → disputed, reimbursed ("the
 * money was reimbursed after a chargeback process": back to the seller, the dispute won) → the
 * refund view, settled ("the money was retained") → charged_back, any other detail → charged_back
 * as before it was read. Amounts become the currency's minor units (ISO 4217 exponent,
 * shared/amounts.ts): a CLP amount (Chile, exponent 0) as it is, ARS/BRL/COP/MXN/PEN/UYU ×100
 * (Mercado Pago sends COP in whole pesos, which ISO still counts in hundredths).
 */

const GATEWAY = 'mercadopago';

function chargedBackStatus(statusDetail: unknown, amount: number, refunded: number): PaymentStatus {
  if (statusDetail === 'in_process') return 'disputed';
  return statusDetail === 'reimbursed' ? refundStatus(amount, refunded) : 'charged_back';
}

function statusOf(mpStatus: string, statusDetail: unknown, amount: number, refunded: number): PaymentStatus {
  switch (mpStatus) {
    case 'pending':
    case 'in_process':
      return 'pending';
    case 'authorized':
      return 'authorized';
    case 'approved':
      return refundStatus(amount, refunded);
    case 'in_mediation':
      return 'disputed';
    case 'rejected':
      return 'failed';
    case 'cancelled':
      return 'canceled';
    case 'refunded':
      return 'refunded';
    case 'charged_back':
      return chargedBackStatus(statusDetail, amount, refunded);
    default:
      throw new GatewayResponseShapeError(GATEWAY, `unknown payment status "${mpStatus}"`);
  }
}

export function mapMercadoPagoPayment(json: unknown): ChargeState {
  const payment = asRecord(json, GATEWAY, 'the payment');
  // Every payment carries both (0 refunded until a refund): read as 0, a missing refunded amount
  // turned a partially refunded payment's snapshot into paid, and a missing amount made any refund
  // the whole of it. A snapshot resets the payment, so an answer without them is not applied.
  const currency = upperCurrency(payment.currency_id);
  const amount = requireDecimalMinorUnits(payment, 'transaction_amount', GATEWAY, currency);
  const refunded = requireDecimalMinorUnits(payment, 'transaction_amount_refunded', GATEWAY, currency);
  const status = statusOf(requireString(payment, 'status', GATEWAY), payment.status_detail, amount, refunded);
  return {
    chargeId: requireString(payment, 'id', GATEWAY),
    status,
    amount,
    amountRefunded: status === 'refunded' && refunded === 0 ? amount : refunded,
    currency,
  };
}

export const mercadopagoApi: GatewayApi = {
  name: GATEWAY,
  defaultBaseUrl: 'https://api.mercadopago.com',
  requiredSettings: [],
  authHeaders: (key) => ({ authorization: `Bearer ${key}` }),
  async readCharge(chargeId, get) {
    return mapMercadoPagoPayment(await get(`/v1/payments/${pathSegment(chargeId)}`));
  },
};
