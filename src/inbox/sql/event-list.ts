import type { SqlExecutor } from '../../db/client.ts';
import { type EventDecisionName, type InboxStatus, eventDecisions } from '../../db/schema.ts';
import { LISTED_EVENT_COLUMNS, type ListedEvent, type ListedEventRow, toListedEvent } from './event-columns.ts';
import { Values, where } from './statement.ts';

/** What an operator searches events by (the dashboard's event list); every field optional. */
export interface EventListFilter {
  provider?: string;
  status?: InboxStatus;
  decision?: EventDecisionName;
  eventType?: string;
  eventId?: string;
  /** The gateway's charge (or payment) id: the event's resource_id. */
  chargeId?: string;
  /** The gateway account the event belongs to (webhook_inbox.account): the (account, id) partial index. */
  account?: string;
  /** received_at in [receivedFrom, receivedBefore). */
  receivedFrom?: Date;
  receivedBefore?: Date;
}

/**
 * The decision as a literal, checked against the fixed list: the partial index on (decision, id)
 * (decision <> 'applied') serves only a statement whose decision the planner can see; behind a
 * parameter, a generic plan could not prove the row is in the index.
 */
function decisionCondition(decision: EventDecisionName): string {
  if (!eventDecisions.includes(decision)) throw new Error(`not a decision: ${JSON.stringify(decision)}`);
  return `decision = '${decision}'`;
}

/**
 * One page of events, newest stored first (id descending), after the page that ended at
 * `beforeId` (ordered by the column: `id` alone would be the float8 output, which no index has).
 * Keyset, not OFFSET: a page is `id < beforeId`, so rows stored while an operator pages
 * (higher ids) never shift the pages after the first, and a page costs the same at any depth.
 *
 * An event id or charge id without a provider is looked up under every provider the inbox knows
 * (`providers`): the (provider, event_id) and (provider, resource_id) indexes lead with the
 * provider, so a bare `event_id = …` would read every partition whole.
 */
export async function findEventsPage(
  db: SqlExecutor,
  filter: EventListFilter,
  page: { beforeId?: number; limit: number; providers: readonly string[] },
): Promise<ListedEvent[]> {
  const values = new Values();
  const byKey = (filter.eventId !== undefined || filter.chargeId !== undefined) && filter.provider === undefined;
  const { rows } = await db.executeSql<ListedEventRow>(
    `select ${LISTED_EVENT_COLUMNS}
     from webhook_inbox
     ${where([
       filter.provider !== undefined ? `provider = ${values.add(filter.provider)}` : undefined,
       byKey ? `provider = any(${values.add(page.providers)}::text[])` : undefined,
       filter.eventId !== undefined ? `event_id = ${values.add(filter.eventId)}` : undefined,
       filter.chargeId !== undefined ? `resource_id = ${values.add(filter.chargeId)}` : undefined,
       filter.account !== undefined ? `account = ${values.add(filter.account)}` : undefined,
       filter.status !== undefined ? `status = ${values.add(filter.status)}` : undefined,
       filter.decision !== undefined ? decisionCondition(filter.decision) : undefined,
       filter.eventType !== undefined ? `event_type = ${values.add(filter.eventType)}` : undefined,
       filter.receivedFrom ? `received_at >= ${values.add(filter.receivedFrom.toISOString())}::timestamptz` : undefined,
       filter.receivedBefore ? `received_at < ${values.add(filter.receivedBefore.toISOString())}::timestamptz` : undefined,
       page.beforeId !== undefined ? `id < ${values.add(page.beforeId)}` : undefined,
     ])}
     order by webhook_inbox.id desc
     limit ${values.add(page.limit)}`,
    values.list,
  );
  return rows.map(toListedEvent);
}
