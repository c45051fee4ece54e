import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import { neverCaptured } from './webhook-driver.ts';
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

/**
 * Asaas v3: `GET /v3/payments/{id}` with the API key in the `access_token` header (docs.asaas.com
 * "Recuperar uma única cobrança"). Production https://api.asaas.com, sandbox
 * https://api-sandbox.asaas.com. Asaas asks API clients for a User-Agent; the refetch client
 * sends one on every request.
 *
 * Fields: `value` is a decimal in reais (converted with string arithmetic); Asaas charges only in
 * BRL, so the currency is BRL. `refunds` (null until there is one) lists refunds with `value` and
 * `status` PENDING | CANCELLED | DONE; only DONE ones have returned money. `deleted: true` is a
 * removed (canceled) charge.
 *
 * Mapping: PENDING, OVERDUE, AWAITING_RISK_ANALYSIS, DUNNING_REQUESTED → pending; AUTHORIZED (a
 * pre-authorized card charge, funds held) → authorized;
 * RECEIVED, CONFIRMED, RECEIVED_IN_CASH, DUNNING_RECEIVED, and REFUND_REQUESTED /
 * REFUND_IN_PROGRESS (nothing returned yet) → paid, or partially_refunded by the DONE refunds;
 * REFUNDED → refunded, or canceled when it was never captured (no confirmedDate nor paymentDate:
 * a released authorization); CHARGEBACK_REQUESTED, CHARGEBACK_DISPUTE → disputed;
 * AWAITING_CHARGEBACK_REVERSAL ("disputa vencida, aguardando repasse da adquirente": the dispute
 * was won) → paid. UNVERIFIED: Asaas documents no payment status for a lost chargeback, so a lost
 * one still reads as disputed here; and whether a partial refund keeps RECEIVED/CONFIRMED (the
 * PAYMENT_PARTIALLY_REFUNDED event suggests so).
 */

const GATEWAY = 'asaas';

const PENDING = new Set(['PENDING', 'OVERDUE', 'AWAITING_RISK_ANALYSIS', 'DUNNING_REQUESTED']);
const PAID = new Set([
  'RECEIVED',
  'CONFIRMED',
  'RECEIVED_IN_CASH',
  'DUNNING_RECEIVED',
  'REFUND_REQUESTED',
  'REFUND_IN_PROGRESS',
  'AWAITING_CHARGEBACK_REVERSAL',
]);
const DISPUTED = new Set(['CHARGEBACK_REQUESTED', 'CHARGEBACK_DISPUTE']);

// Asaas charges only in reais: a payment has no currency field.
const CURRENCY = 'BRL';

function doneRefunds(refunds: unknown): number {
  // Asaas returns `refunds` only once a payment has some (docs.asaas.com "Refunds"; null before):
  // then nothing was refunded. Anything else that is not a list is not an answer to guess from.
  if (refunds === null || refunds === undefined) return 0;
  if (!Array.isArray(refunds)) throw new GatewayResponseShapeError(GATEWAY, '"refunds" is not a list');
  let total = 0;
  for (const entry of refunds) {
    const refund = asRecord(entry, GATEWAY, 'a refund');
    // Each refund has its status and value: one that cannot be read might be DONE, and read as 0
    // it turned a partially refunded payment's snapshot into paid.
    if (requireString(refund, 'status', GATEWAY) === 'DONE') total += requireDecimalMinorUnits(refund, 'value', GATEWAY, CURRENCY);
  }
  return total;
}

function statusOf(payment: Record<string, unknown>, asaasStatus: string, amount: number, refunded: number): PaymentStatus {
  const deleted = payment.deleted === true;
  if (asaasStatus === 'REFUNDED') return neverCaptured(payment) ? 'canceled' : 'refunded';
  if (asaasStatus === 'AUTHORIZED') return deleted ? 'canceled' : 'authorized';
  if (DISPUTED.has(asaasStatus)) return 'disputed';
  if (PAID.has(asaasStatus)) return refundStatus(amount, refunded);
  if (PENDING.has(asaasStatus)) return deleted ? 'canceled' : 'pending';
  throw new GatewayResponseShapeError(GATEWAY, `unknown payment status "${asaasStatus}"`);
}

export function mapAsaasPayment(json: unknown): ChargeState {
  const payment = asRecord(json, GATEWAY, 'the payment');
  // Every payment has its value: without it any DONE refund would read as all of it.
  const amount = requireDecimalMinorUnits(payment, 'value', GATEWAY, CURRENCY);
  const refunded = doneRefunds(payment.refunds);
  const status = statusOf(payment, requireString(payment, 'status', GATEWAY), amount, refunded);
  return {
    chargeId: requireString(payment, 'id', GATEWAY),
    status,
    amount,
    // REFUNDED without a DONE entry (older payloads list no refunds) returned the whole value.
    amountRefunded: status === 'refunded' && refunded === 0 ? amount : refunded,
    currency: CURRENCY,
  };
}

export const asaasApi: GatewayApi = {
  name: GATEWAY,
  defaultBaseUrl: 'https://api.asaas.com',
  requiredSettings: [],
  authHeaders: (key) => ({ access_token: key }),
  async readCharge(chargeId, get) {
    return mapAsaasPayment(await get(`/v3/payments/${pathSegment(chargeId)}`));
  },
};
