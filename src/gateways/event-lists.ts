import { GatewayResponseShapeError, asRecord } from './types.ts';

/**
 * A gateway API that lists past events — or past payments, turned here into the notice a webhook
 * would have carried — so `inboxctl backfill` can store the ones the inbox never received. Pure:
 * the caller sends the GETs (through the refetch layer's rate limit and breaker) and hands the
 * parsed answers back. A cursor is whatever the API pages by: an id, or an offset as text.
 */
export interface GatewayEventList {
  readonly gateway: string;
  /** How far back the API lists events: an older `--since` is cut to this, with a notice. */
  readonly retentionDays: number;
  /** The path (with query) of one page of events created at or after `since`, after `cursor` (undefined: the first page). */
  pagePath(since: Date, cursor: string | undefined): string;
  /** The page's events, newest first, each the object a webhook would have POSTed; `nextCursor` undefined on the last page. */
  readPage(json: unknown): EventListPage;
}

export interface EventListPage {
  events: Record<string, unknown>[];
  nextCursor: string | undefined;
}

const STRIPE_PAGE_SIZE = 100;

/**
 * Stripe `GET /v1/events` (API reference "List all events"; stripe-node `EventListParams`): newest
 * first, `created[gte]` (Unix seconds), `limit` 1–100, `starting_after` = the last id of the page
 * before, `has_more`. Each entry is the Event object a webhook endpoint receives. Stripe keeps 30
 * days of events, and renders each one's `data` in the API version of its creation (the version
 * an endpoint pinned to another version would have received may differ).
 */
export const stripeEventList: GatewayEventList = {
  gateway: 'stripe',
  retentionDays: 30,
  pagePath(since, cursor) {
    const query = new URLSearchParams({ 'created[gte]': String(Math.floor(since.getTime() / 1000)), limit: String(STRIPE_PAGE_SIZE) });
    if (cursor !== undefined) query.set('starting_after', cursor);
    return `/v1/events?${query.toString()}`;
  },
  readPage(json) {
    const page = asRecord(json, 'stripe', 'the event list');
    if (!Array.isArray(page.data) || typeof page.has_more !== 'boolean') throw new GatewayResponseShapeError('stripe', 'the event list has no "data" array or no "has_more"');
    const events = page.data.map((entry) => asRecord(entry, 'stripe', 'an event in the list'));
    const last = events.at(-1);
    if (page.has_more && typeof last?.id !== 'string') throw new GatewayResponseShapeError('stripe', '"has_more" is true but the page ends with no event id');
    return { events, nextCursor: page.has_more ? (last!.id as string) : undefined };
  },
};

/**
 * The next offset of an offset-paged list (Mercado Pago, Asaas), as a cursor: undefined once the
 * page was short or empty, so a total that grows during the run cannot loop forever.
 */
function nextOffset(offset: number, listed: number, hasMore: boolean): string | undefined {
  return hasMore && listed > 0 ? String(offset + listed) : undefined;
}

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

/**
 * The gateways that can be backfilled, by API mapping name (README, Operations → Backfill, says
 * why the others cannot).
 */
export const gatewayEventLists: Readonly<Record<string, GatewayEventList>> = {
  stripe: stripeEventList,
  mercadopago: mercadoPagoPaymentList,
};
