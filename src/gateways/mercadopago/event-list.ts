import { type GatewayEventList, nextOffset, textOrUndefined } from '../shared/event-list.ts';
import { GatewayResponseShapeError, asRecord } from '../shared/gateway-api.ts';

const MERCADOPAGO_PAGE_SIZE = 100;

/**
 * Mercado Pago `GET /v1/payments/search` (API reference "Search payments"; devsite-docs "Search
 * payments" example): `range` names the date field `begin_date`/`end_date` filter on, `sort` +
 * `criteria=desc` lists newest first, `offset`/`limit` page, and the answer is `{ paging: { total,
 * limit, offset }, results: [payment…] }`. Filtered and sorted by `date_last_updated`, so a
 * payment created long ago and refunded or charged back in the window is listed too.
 *
 * Mercado Pago's webhooks are thin notices (`{ action: 'payment.updated', type: 'payment', data:
 * { id } }`), each refetched when processed; the backfill stores the same notice per listed
 * payment, with a stable id of the payment id and its `date_last_updated`: a second run dedupes,
 * a later change of the same payment is a new notice. It cannot match the id of a notice Mercado
 * Pago delivered (that id is Mercado Pago's own), so a payment whose last change was delivered
 * gets one more notice: its refetch reads the state the inbox already has, and changes nothing.
 * UNVERIFIED: how far back the search reaches (365 days assumed); that `begin_date` accepts a UTC
 * `Z` time (the docs' examples use an offset such as -04:00); that offset paging is stable while
 * payments change (a payment updated during the run moves to the first page: a second run
 * finds it).
 */
export const mercadoPagoPaymentList: GatewayEventList = {
  gateway: 'mercadopago',
  retentionDays: 365,
  pagePath(since, cursor) {
    const query = new URLSearchParams({
      sort: 'date_last_updated',
      criteria: 'desc',
      range: 'date_last_updated',
      begin_date: since.toISOString(),
      end_date: 'NOW',
      offset: cursor ?? '0',
      limit: String(MERCADOPAGO_PAGE_SIZE),
    });
    return `/v1/payments/search?${query.toString()}`;
  },
  readPage(json) {
    const page = asRecord(json, 'mercadopago', 'the payment search');
    const paging = page.paging as Record<string, unknown> | undefined;
    if (!Array.isArray(page.results) || typeof paging?.total !== 'number' || typeof paging.offset !== 'number') {
      throw new GatewayResponseShapeError('mercadopago', 'the payment search has no "results" array or no "paging" total and offset');
    }
    const events = page.results.map((entry) => mercadoPagoNotice(asRecord(entry, 'mercadopago', 'a payment in the search')));
    return { events, nextCursor: nextOffset(paging.offset, events.length, paging.offset + events.length < paging.total) };
  },
  nameOf: (event) => ({ eventId: textOrUndefined(event.id), eventType: textOrUndefined(event.action) }),
};

/** The notice Mercado Pago would have POSTed for this payment's last change. */
function mercadoPagoNotice(payment: Record<string, unknown>): Record<string, unknown> {
  const id = typeof payment.id === 'number' || typeof payment.id === 'string' ? String(payment.id) : undefined;
  const updated = typeof payment.date_last_updated === 'string' ? new Date(payment.date_last_updated) : undefined;
  if (id === undefined || updated === undefined || Number.isNaN(updated.getTime())) {
    throw new GatewayResponseShapeError('mercadopago', 'a payment in the search has no "id" or no "date_last_updated" time');
  }
  const changedSinceCreated = payment.date_created !== payment.date_last_updated;
  return {
    // Instants, not Mercado Pago's text: the same change always gets the same id.
    id: `backfill:${id}:${updated.toISOString()}`,
    type: 'payment',
    action: changedSinceCreated ? 'payment.updated' : 'payment.created',
    data: { id },
    date_created: updated.toISOString(),
    live_mode: payment.live_mode,
  };
}
