import { GatewayResponseShapeError, asRecord } from './types.ts';

/**
 * A gateway API that lists past events in the shape its webhooks deliver them, so `inboxctl
 * backfill` can store the ones the inbox never received. Pure: the caller sends the GETs (through
 * the refetch layer's rate limit and breaker) and hands the parsed answers back.
 */
export interface GatewayEventList {
  readonly gateway: string;
  /** How far back the API lists events: an older `--since` is cut to this, with a notice. */
  readonly retentionDays: number;
  /** The path (with query) of one page of events created at or after `since`, after `cursor` (undefined: the first page). */
  pagePath(since: Date, cursor: string | undefined): string;
  /** The page's events, each the object a webhook would have POSTed; `nextCursor` undefined on the last page. */
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
 * The gateways that can be backfilled, by API mapping name (README, Operations → Backfill, says
 * why the others cannot).
 */
export const gatewayEventLists: Readonly<Record<string, GatewayEventList>> = {
  stripe: stripeEventList,
};
