import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import {
  type ChargeState,
  type GatewayApi,
  GatewayResponseShapeError,
  asRecord,
  basicAuthorization,
  pathSegment,
  refundStatus,
  requireDecimalMinorUnits,
  requireString,
} from '../shared/gateway-api.ts';
import { upperCurrency } from '../shared/payment-facts.ts';

/**
 * Zoop: `GET /v1/marketplaces/{marketplace_id}/transactions/{id}` on https://api.zoop.ws, HTTP
 * Basic with the API key as user name and an empty password (imobanco/zoop-wrapper
 * `BaseZoopWrapper`, the only public client found; Zoop's own reference was not readable here).
 *
 * Fields (wrapper fixtures): `amount` and `original_amount` are decimal strings ("29.90"), on
 * every transaction (a shape error without them);
 * `currency` "BRL"; booleans `captured`, `voided`, `refunded`; `status` seen as succeeded,
 * failed, canceled, pending, pre_authorized, and by the event names also reversed, charged_back
 * and dispute(d).
 *
 * Mapping: new/pending → pending; pre_authorized → authorized (funds held, not captured); succeeded → paid, or partially_refunded when
 * `amount` has dropped below `original_amount`; canceled → refunded when a captured transaction
 * was voided or refunded (a card void after capture returns the money), canceled otherwise;
 * reversed/refunded → refunded; dispute/disputed → disputed; charged_back → charged_back;
 * failed → failed. UNVERIFIED: the status names reversed/refunded/dispute/charged_back on the
 * resource itself (only their event names are published) and that a partial void lowers `amount`.
 */

const GATEWAY = 'zoop';

function statusOf(transaction: Record<string, unknown>, original: number, remaining: number): PaymentStatus {
  const zoopStatus = requireString(transaction, 'status', GATEWAY);
  switch (zoopStatus) {
    case 'new':
    case 'pending':
      return 'pending';
    case 'pre_authorized':
      return 'authorized';
    case 'succeeded':
      return refundStatus(original, original - remaining);
    case 'canceled': {
      const returned = transaction.voided === true || transaction.refunded === true;
      return returned && transaction.captured === true ? 'refunded' : 'canceled';
    }
    case 'reversed':
    case 'refunded':
      return 'refunded';
    case 'dispute':
    case 'disputed':
      return 'disputed';
    case 'charged_back':
      return 'charged_back';
    case 'failed':
      return 'failed';
    default:
      throw new GatewayResponseShapeError(GATEWAY, `unknown transaction status "${zoopStatus}"`);
  }
}

export function mapZoopTransaction(json: unknown): ChargeState {
  const transaction = asRecord(json, GATEWAY, 'the transaction');
  // Every recorded transaction answer carries both (imobanco/zoop-wrapper examples/data: retrieve,
  // list, add, cancel and the event payloads): what was refunded is their difference, so without
  // either one a partially refunded transaction would read as paid (a snapshot would reset it).
  const currency = upperCurrency(transaction.currency) ?? 'BRL';
  const remaining = requireDecimalMinorUnits(transaction, 'amount', GATEWAY, currency);
  const original = requireDecimalMinorUnits(transaction, 'original_amount', GATEWAY, currency);
  const status = statusOf(transaction, original, remaining);
  let amountRefunded = 0;
  if (status === 'refunded') amountRefunded = original;
  else if (status === 'partially_refunded') amountRefunded = original - remaining;
  return {
    chargeId: requireString(transaction, 'id', GATEWAY),
    status,
    amount: original,
    amountRefunded,
    currency,
  };
}

export const zoopApi: GatewayApi = {
  name: GATEWAY,
  defaultBaseUrl: 'https://api.zoop.ws',
  requiredSettings: ['marketplaceId'],
  authHeaders: (key) => ({ authorization: basicAuthorization(key) }),
  async readCharge(chargeId, get, settings) {
    const marketplace = settings.marketplaceId;
    if (!marketplace) throw new Error('zoop: api.marketplaceId is required (configuration should have refused to start)');
    return mapZoopTransaction(await get(`/v1/marketplaces/${pathSegment(marketplace)}/transactions/${pathSegment(chargeId)}`));
  },
};
