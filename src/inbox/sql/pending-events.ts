import type { SqlExecutor } from '../../db/client.ts';
import type { InboxStatus } from '../../db/schema.ts';
import { ENQUEUEABLE_COLUMNS, type EnqueueableRow, type QueueableEvent, toQueueableEvent } from './event-columns.ts';
import { Values, where } from './statement.ts';

/**
 * Pending rows received before `cutoff`, oldest first, on the (status, received_at) index: an
 * index range scan that stops after `limit` entries, however large the table.
 */
export async function findStalePendingEvents(db: SqlExecutor, cutoff: Date, limit: number): Promise<QueueableEvent[]> {
  const { rows } = await db.executeSql<EnqueueableRow>(
    `select ${ENQUEUEABLE_COLUMNS} from webhook_inbox
     where status = 'pending' and received_at < $1::timestamptz
     order by webhook_inbox.received_at limit $2`,
    [cutoff.toISOString(), limit],
  );
  return rows.map(toQueueableEvent);
}

export interface ReplayFilter {
  provider: string;
  /** Received at or after (inclusive). */
  since?: Date;
  /** Received before (exclusive). */
  until?: Date;
  /** Only these events (the gateway's ids). */
  eventIds?: readonly string[];
  /** Only the events of this gateway account (webhook_inbox.account). */
  account?: string;
}

export interface ReplayCandidate {
  id: number;
  eventId: string;
  status: InboxStatus;
}

/** One provider's events in these statuses matching the filter, oldest first; the (status, received_at) index serves the status/time part. */
export async function findReplayCandidates(db: SqlExecutor, filter: ReplayFilter, statuses: readonly InboxStatus[]): Promise<ReplayCandidate[]> {
  if (filter.eventIds?.length === 0) return [];
  const values = new Values();
  const { rows } = await db.executeSql<{ id: number; event_id: string; status: InboxStatus }>(
    `select id::float8 as id, event_id, status from webhook_inbox
     ${where([
       `provider = ${values.add(filter.provider)}`,
       `status = any(${values.add([...statuses])}::text[])`,
       filter.since ? `received_at >= ${values.add(filter.since.toISOString())}::timestamptz` : undefined,
       filter.until ? `received_at < ${values.add(filter.until.toISOString())}::timestamptz` : undefined,
       filter.eventIds ? `event_id = any(${values.add([...filter.eventIds])}::text[])` : undefined,
       filter.account ? `account = ${values.add(filter.account)}` : undefined,
     ])}
     order by webhook_inbox.received_at, webhook_inbox.id`,
    values.list,
  );
  return rows.map((r) => ({ id: r.id, eventId: r.event_id, status: r.status }));
}

/**
 * The status of each of one provider's events named by id (absent ids are left out): what a replay
 * by `--event-id` reports for the ids it did not take, so an existing event is not taken for a typo.
 */
export async function findEventStatuses(
  db: SqlExecutor,
  provider: string,
  eventIds: readonly string[],
): Promise<Array<{ eventId: string; status: InboxStatus }>> {
  if (eventIds.length === 0) return [];
  const { rows } = await db.executeSql<{ event_id: string; status: InboxStatus }>(
    `select event_id, status from webhook_inbox where provider = $1 and event_id = any($2::text[])`,
    [provider, [...eventIds]],
  );
  return rows.map((r) => ({ eventId: r.event_id, status: r.status }));
}
