import { type GatewayEventList, nextOffset, textOrUndefined } from '../shared/event-list.ts';
import { GatewayResponseShapeError, asRecord } from '../shared/gateway-api.ts';

const ASAAS_PAGE_SIZE = 100;

/** The webhook event that announces each Asaas payment status (consistent with webhook-driver.ts). */
const asaasEventByStatus: Readonly<Record<string, string>> = {
  PENDING: 'PAYMENT_CREATED',
  OVERDUE: 'PAYMENT_OVERDUE',
  AWAITING_RISK_ANALYSIS: 'PAYMENT_AWAITING_RISK_ANALYSIS',
  AUTHORIZED: 'PAYMENT_AUTHORIZED',
  CONFIRMED: 'PAYMENT_CONFIRMED',
  RECEIVED: 'PAYMENT_RECEIVED',
  RECEIVED_IN_CASH: 'PAYMENT_RECEIVED',
  REFUNDED: 'PAYMENT_REFUNDED',
  // Nothing returned yet: announced, not mapped to a canonical status by the driver.
  REFUND_REQUESTED: 'PAYMENT_REFUND_IN_PROGRESS',
  REFUND_IN_PROGRESS: 'PAYMENT_REFUND_IN_PROGRESS',
  CHARGEBACK_REQUESTED: 'PAYMENT_CHARGEBACK_REQUESTED',
  CHARGEBACK_DISPUTE: 'PAYMENT_CHARGEBACK_DISPUTE',
  AWAITING_CHARGEBACK_REVERSAL: 'PAYMENT_AWAITING_CHARGEBACK_REVERSAL',
  DUNNING_REQUESTED: 'PAYMENT_DUNNING_REQUESTED',
  DUNNING_RECEIVED: 'PAYMENT_DUNNING_RECEIVED',
};

/** The event a webhook would have carried for the payment as it stands now. */
function asaasEventOf(payment: Record<string, unknown>): string {
  if (payment.deleted === true) return 'PAYMENT_DELETED';
  const event = typeof payment.status === 'string' ? asaasEventByStatus[payment.status] : undefined;
  // A status this map does not know is stored as PAYMENT_UPDATED (the driver maps it to nothing)
  // rather than stopping the whole run: it shows up as not a payment event.
  if (event === undefined) return 'PAYMENT_UPDATED';
  // A partial refund leaves the charge RECEIVED/CONFIRMED and lists the refund.
  const paid = event === 'PAYMENT_RECEIVED' || event === 'PAYMENT_CONFIRMED';
  const refunds = Array.isArray(payment.refunds) ? (payment.refunds as Array<Record<string, unknown> | null>) : [];
  return paid && refunds.some((refund) => refund?.status === 'DONE') ? 'PAYMENT_PARTIALLY_REFUNDED' : event;
}

/**
 * Asaas `GET /v3/payments` ("Listar cobranças"): `dateCreated[ge]` (a date, YYYY-MM-DD, in Asaas's
 * São Paulo time), `offset`/`limit` (at most 100), answering `{ hasMore, totalCount, limit, offset,
 * data: [payment…] }`. It lists charges, not events, and filters by the charge's **creation**
 * date: a charge created before `--since` and paid or refunded inside it is not listed (there is
 * no filter by last change). Each listed charge becomes the webhook Asaas would have sent for its
 * current status, with a stable id of the charge id and that event: a second run dedupes, a
 * later status is a new event. It has no `dateCreated`, so it is ordered at the time of the
 * backfill (`occurred_at` = receipt): it is the newest thing known about the charge. The id
 * cannot match a delivered webhook's (`evt_…`): a charge whose last event was delivered gets one
 * more event that changes nothing. Only the current status is seen, not the events before it.
 * UNVERIFIED: the list's order (the store order does not matter: one event per charge), and
 * whether deleted charges are listed.
 */
export const asaasPaymentList: GatewayEventList = {
  gateway: 'asaas',
  retentionDays: 365,
  pagePath(since, cursor) {
    const saoPauloDate = new Date(since.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);
    const query = new URLSearchParams({ 'dateCreated[ge]': saoPauloDate, offset: cursor ?? '0', limit: String(ASAAS_PAGE_SIZE) });
    return `/v3/payments?${query.toString()}`;
  },
  readPage(json) {
    const page = asRecord(json, 'asaas', 'the payment list');
    if (!Array.isArray(page.data) || typeof page.hasMore !== 'boolean' || typeof page.offset !== 'number') {
      throw new GatewayResponseShapeError('asaas', 'the payment list has no "data" array, "hasMore" or "offset"');
    }
    const events = page.data.map((entry) => asaasWebhook(asRecord(entry, 'asaas', 'a payment in the list')));
    return { events, nextCursor: nextOffset(page.offset, events.length, page.hasMore) };
  },
  nameOf: (event) => ({ eventId: textOrUndefined(event.id), eventType: textOrUndefined(event.event) }),
};

function asaasWebhook(payment: Record<string, unknown>): Record<string, unknown> {
  if (typeof payment.id !== 'string' || payment.id === '') throw new GatewayResponseShapeError('asaas', 'a payment in the list has no "id"');
  const event = asaasEventOf(payment);
  return { id: `backfill:${payment.id}:${event}`, event, payment };
}
