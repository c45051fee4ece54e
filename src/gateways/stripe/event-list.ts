import { type GatewayEventList, textOrUndefined } from '../shared/event-list.ts';
import { GatewayResponseShapeError, asRecord } from '../shared/gateway-api.ts';

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
    if (!Array.isArray(page.data) || typeof page.has_more !== 'boolean')
      throw new GatewayResponseShapeError('stripe', 'the event list has no "data" array or no "has_more"');
    const events = page.data.map((entry) => asRecord(entry, 'stripe', 'an event in the list'));
    const last = events.at(-1);
    if (page.has_more && typeof last?.id !== 'string') throw new GatewayResponseShapeError('stripe', '"has_more" is true but the page ends with no event id');
    return { events, nextCursor: page.has_more ? (last!.id as string) : undefined };
  },
  nameOf: (event) => ({ eventId: textOrUndefined(event.id), eventType: textOrUndefined(event.type) }),
};
