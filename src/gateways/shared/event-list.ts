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

export const textOrUndefined = (value: unknown) => (typeof value === 'string' ? value : undefined);

export interface EventListPage {
  events: Record<string, unknown>[];
  nextCursor: string | undefined;
}

/**
 * The next offset of an offset-paged list (Mercado Pago, Asaas), as a cursor: undefined once the
 * page was short or empty, so a total that grows during the run cannot loop forever.
 */
export function nextOffset(offset: number, listed: number, hasMore: boolean): string | undefined {
  return hasMore && listed > 0 ? String(offset + listed) : undefined;
}
