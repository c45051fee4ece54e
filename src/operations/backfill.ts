import { InboxError } from '../errors.ts';
import type { EventListPage, GatewayEventList, ListedEventName } from '../gateways/shared/event-list.ts';
import { GatewayResponseShapeError } from '../gateways/shared/gateway-api.ts';
import { eventFingerprint } from '../inbox/event-fingerprint.ts';
import type { IncomingEvent } from '../inbox/incoming-event.ts';
import type { IngestOutcome } from '../inbox/group-commit.ts';
import { validateNormalizedEvent } from '../inbox/normalized-event.ts';
import type { ProviderDriver } from '../gateways/shared/webhook-driver.ts';
import { GatewayRejectedError } from '../refetch/errors.ts';
import { getWaitingOutRateLimits } from '../refetch/patient-get.ts';
import { OperationIncompleteError, PartialResultError } from './errors.ts';

export interface BackfillDeps {
  provider: string;
  /** The provider's own driver: an API event is parsed exactly as its webhook would have been (not verified: nothing signed it). */
  driver: ProviderDriver;
  list: GatewayEventList;
  /**
   * The account whose events are listed (`inboxctl backfill --account`: an Asaas subaccount, read
   * with its own key; a Connect account, on its behalf): each stored event is that account's. Null
   * or absent: the provider's own account, or what the driver reads from the event.
   */
  account?: string | null;
  /** A GET of the provider's API through the refetch layer (rate limit, breaker, timeout, key). */
  get(path: string): Promise<unknown>;
  /** The webhook receiver's insert path: insert-if-absent and enqueue in one transaction. */
  ingest(event: IncomingEvent): Promise<IngestOutcome>;
  /** Which of these ids the inbox holds already (one index probe each). */
  findPresent(eventIds: readonly string[]): Promise<Set<string>>;
  clock: () => Date;
  sleep(ms: number): Promise<void>;
  /** A line of progress (a 429 wait), for stderr. */
  notice(text: string): void;
}

export interface BackfillOptions {
  since: Date;
  dryRun: boolean;
}

export interface BackfillResult {
  provider: string;
  since: Date;
  dryRun: boolean;
  pages: number;
  /** Events the API listed in the window. */
  listed: number;
  /** Already in the inbox (received as webhooks, or backfilled before): counted, not touched. */
  alreadyPresent: number;
  /** Stored now with source backfill and queued (with --dry-run: that would be). */
  stored: number;
  /** The stored (or, dry run, missing) event ids, oldest first. */
  storedEventIds: string[];
  /** Times a 429 made the backfill wait out Retry-After. */
  rateLimitedWaits: number;
  /**
   * Listed, not in the inbox, and refused by it (its driver or the database) as a webhook request of the
   * same body would be: not stored, and a run again refuses them again.
   */
  refused: RefusedEvent[];
}

/** An event the inbox cannot store: named as the list carries it (cut to MAX_NAME_CHARS), and why. */
export interface RefusedEvent {
  eventId: string | null;
  eventType: string | null;
  /** The refusal's code (malformed_payload, event_unstorable, …) and message, as a webhook request's 400 would say. */
  code: string;
  reason: string;
}

/** The id column's width: a listed id or type past it is shown cut, with an ellipsis. */
const MAX_NAME_CHARS = 150;

/**
 * The event an API listed, as the inbox stores it: through the provider's own parse, the same
 * storability gate and fingerprint as a webhook, marked `source: 'backfill'`.
 *
 * Its proof of verification is the API itself: the page it was listed from (the gateway's path and
 * query; the host is the provider's configured API) and when, fetched with the provider's API key.
 */
function backfilledEvent(deps: BackfillDeps, apiEvent: Record<string, unknown>, pagePath: string, now: Date): IncomingEvent {
  // The API answers a list of parsed objects, not the bytes a webhook request would have carried; the
  // event's JSON text stands in for them (nothing was signed, so no signature can be checked).
  const rawBody = Buffer.from(JSON.stringify(apiEvent), 'utf8');
  const parsed = deps.driver.parse({ rawBody, header: () => undefined, query: new URLSearchParams() }, now);
  // Listed with the account's own key (or on its behalf): the event is that account's, as its
  // delivery, carrying that account's token, would have been.
  const event = validateNormalizedEvent(deps.account ? { ...parsed, account: deps.account } : parsed, rawBody);
  return {
    provider: deps.provider,
    event,
    rawBody,
    fingerprint: eventFingerprint({ provider: deps.provider, ...event }, deps.driver),
    source: 'backfill',
    proof: { scheme: 'gateway-api', endpoint: pagePath, fetchedAt: now.toISOString() },
  };
}

/**
 * What the receiver answers 4xx: the event itself cannot be stored, and would be refused again.
 * Anything else (the database unavailable, a bug) stops the run: it may pass later.
 */
function refusedByTheInbox(error: unknown): error is InboxError {
  return error instanceof InboxError && error.status >= 400 && error.status < 500;
}

function refusal(name: ListedEventName, error: InboxError): RefusedEvent {
  const shown = (text: string | undefined) => (text === undefined ? null : text.length > MAX_NAME_CHARS ? `${text.slice(0, MAX_NAME_CHARS)}…` : text);
  return { eventId: shown(name.eventId), eventType: shown(name.eventType), code: error.code, reason: error.message };
}

/** Stored oldest first, this many per transaction (with their jobs). */
const STORE_BATCH_SIZE = 100;

/**
 * Stores the missing events oldest first, as the webhook requests would have arrived: ids, and so the
 * workers' order per payment, follow the gateway's. Each batch is stored concurrently, so the group
 * commit puts it in one transaction with its jobs. An event sent since the listing is a
 * duplicate here (the unique index decides) and counts as present; one the database refuses for
 * what it holds is named in `refused`, and the others are stored.
 */
async function storeMissing(deps: BackfillDeps, newestFirst: IncomingEvent[], result: BackfillResult): Promise<void> {
  const oldestFirst = [...newestFirst].reverse();
  for (let start = 0; start < oldestFirst.length; start += STORE_BATCH_SIZE) {
    const batch = oldestFirst.slice(start, start + STORE_BATCH_SIZE);
    // Every event of the batch is answered before the run goes on or stops: the group commit
    // stores the others when one is refused, and the result must name each one stored.
    const outcomes = await Promise.allSettled(batch.map((event) => deps.ingest(event)));
    outcomes.forEach((outcome, i) => {
      const { event } = batch[i]!;
      if (outcome.status === 'rejected') {
        if (refusedByTheInbox(outcome.reason)) result.refused.push(refusal(event, outcome.reason));
      } else if (outcome.value.kind === 'accepted') result.storedEventIds.push(event.eventId);
      else result.alreadyPresent += 1;
    });
    result.stored = result.storedEventIds.length;
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected' && !refusedByTheInbox(outcome.reason));
    if (failed) throw failed.reason;
  }
}

/**
 * A page's events as the inbox would store them, each once: an offset-paged list (Mercado Pago,
 * Asaas) moves on by one for each payment that changes during the run, so the next page starts
 * with one already read. One the inbox refuses is counted and named, never stored, and the run
 * goes on: it would be refused again, and stopping would leave every other missing event missing.
 */
function storableEvents(deps: BackfillDeps, page: EventListPage, pagePath: string, seen: Set<string>, result: BackfillResult): IncomingEvent[] {
  const now = deps.clock();
  const events: IncomingEvent[] = [];
  for (const apiEvent of page.events) {
    let event: IncomingEvent;
    try {
      event = backfilledEvent(deps, apiEvent, pagePath, now);
    } catch (error) {
      if (!refusedByTheInbox(error)) throw error;
      const name = deps.list.nameOf(apiEvent);
      if (name.eventId !== undefined && seen.has(name.eventId)) continue;
      if (name.eventId !== undefined) seen.add(name.eventId);
      result.listed += 1;
      result.refused.push(refusal(name, error));
      continue;
    }
    if (seen.has(event.event.eventId)) continue;
    seen.add(event.event.eventId);
    events.push(event);
  }
  return events;
}

/** Every page of the window (newest first, as the APIs list), keeping only the events the inbox lacks. */
async function listMissing(deps: BackfillDeps, since: Date, result: BackfillResult): Promise<IncomingEvent[]> {
  const missing: IncomingEvent[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const pagePath = deps.list.pagePath(since, cursor);
    const page = deps.list.readPage(await getWaitingOutRateLimits({ ...deps, operation: 'backfill' }, pagePath, result));
    result.pages += 1;
    const events = storableEvents(deps, page, pagePath, seen, result);
    const present = await deps.findPresent(events.map((e) => e.event.eventId));
    result.listed += events.length;
    const absent = events.filter((e) => !present.has(e.event.eventId));
    result.alreadyPresent += events.length - absent.length;
    missing.push(...absent);
    // An API that ignores the cursor would answer the same page forever: stop instead.
    if (page.nextCursor !== undefined && page.nextCursor === cursor)
      throw new GatewayResponseShapeError(deps.provider, `the API answered the same page again (cursor ${cursor})`);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return missing;
}

/**
 * Lists the provider's events since `since` (created since, or for a payment list changed or
 * created since, as the gateway's list says) and stores the ones the inbox does not have through
 * the webhook insert path, oldest first. Only the missing events are held in memory
 * between listing and storing. A run that stops while listing stores nothing; one that stops while
 * storing keeps the committed batches; either way a second run (idempotent: the unique index)
 * finishes the job.
 */
export async function backfillEvents(deps: BackfillDeps, options: BackfillOptions): Promise<BackfillResult> {
  const result: BackfillResult = {
    provider: deps.provider,
    since: options.since,
    dryRun: options.dryRun,
    pages: 0,
    listed: 0,
    alreadyPresent: 0,
    stored: 0,
    storedEventIds: [],
    rateLimitedWaits: 0,
    refused: [],
  };
  try {
    const missing = await listMissing(deps, options.since, result);
    if (options.dryRun) {
      result.storedEventIds = [...missing].reverse().map((e) => e.event.eventId);
      result.stored = missing.length;
    } else await storeMissing(deps, missing, result);
  } catch (error) {
    const cause = error instanceof GatewayResponseShapeError ? new GatewayRejectedError(deps.provider, error.message, { cause: error }) : error;
    // What was listed and stored so far stays true: the stored events are committed, with their jobs.
    throw new PartialResultError(new OperationIncompleteError('backfill', progressOf(result), cause), {
      ...result,
      storedEventIds: [...result.storedEventIds],
      refused: [...result.refused],
    });
  }
  return result;
}

function progressOf(result: BackfillResult): string {
  return `${result.pages} page(s) read, ${result.listed} event(s) listed`;
}
