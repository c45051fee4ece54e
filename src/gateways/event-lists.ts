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
  /** A listed event's id and type as the list carries them, to name one the inbox refused (the driver could not read it). */
  nameOf(event: Record<string, unknown>): ListedEventName;
}

export interface ListedEventName {
  eventId: string | undefined;
  eventType: string | undefined;
}

const textOrUndefined = (value: unknown) => (typeof value === 'string' ? value : undefined);

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
  nameOf: (event) => ({ eventId: textOrUndefined(event.id), eventType: textOrUndefined(event.type) }),
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

const ASAAS_PAGE_SIZE = 100;

/** The webhook event that announces each Asaas payment status (consistent with providers/asaas.ts). */
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

/**
 * The gateways that can be backfilled, by API mapping name (README, Operations → Backfill, says
 * why the others cannot).
 */
export const gatewayEventLists: Readonly<Record<string, GatewayEventList>> = {
  stripe: stripeEventList,
  mercadopago: mercadoPagoPaymentList,
  asaas: asaasPaymentList,
};
