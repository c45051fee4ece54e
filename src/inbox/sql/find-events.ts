import type { SqlExecutor } from '../../db/client.ts';
import {
  EVENT_DETAIL_COLUMNS,
  type InboxEventDetail,
  type InboxEventRow,
  STORED_EVENT_COLUMNS,
  type StoredEventRow,
  storedEventColumns,
  toInboxEvent,
  toInboxEventDetail,
} from './event-columns.ts';
import { type InboxRowRef, receivedWindowCondition } from './received-window.ts';
import { NOT_CARRIED_YET } from './carry-over.ts';
import { SETTLED_STATUS_LIST } from './settled.ts';
import { dateOf, epochMs } from './statement.ts';

/** Events by primary key, unlocked (processing reads a batch's rows outside its transaction first). */
export async function findEventsByIds(db: SqlExecutor, refs: readonly InboxRowRef[]): Promise<Map<number, InboxEventRow>> {
  if (refs.length === 0) return new Map();
  const window = receivedWindowCondition(refs, 2);
  const { rows } = await db.executeSql<StoredEventRow>(`select ${STORED_EVENT_COLUMNS} from webhook_inbox where id = any($1::bigint[])${window.sql}`, [
    refs.map((ref) => ref.id),
    ...window.parameters,
  ]);
  return new Map(rows.map((row) => [row.id, toInboxEvent(row)]));
}

/** One event by primary key, with everything an operator looks at (the dashboard's event page). */
export async function findEventById(db: SqlExecutor, id: number): Promise<InboxEventDetail | undefined> {
  const { rows } = await db.executeSql<Parameters<typeof toInboxEventDetail>[0]>(`select ${EVENT_DETAIL_COLUMNS} from webhook_inbox where id = $1`, [id]);
  return rows[0] && toInboxEventDetail(rows[0]);
}

/** One event by its natural key, on the (provider, event_id) unique index (`inboxctl show`). */
export async function findEventByKey(db: SqlExecutor, provider: string, eventId: string): Promise<InboxEventDetail | undefined> {
  const { rows } = await db.executeSql<Parameters<typeof toInboxEventDetail>[0]>(
    `select ${EVENT_DETAIL_COLUMNS} from webhook_inbox where provider = $1 and event_id = $2`,
    [provider, eventId],
  );
  return rows[0] && toInboxEventDetail(rows[0]);
}

export interface ResourceEvent {
  id: number;
  eventId: string;
  eventType: string;
  status: string;
  occurredAt: Date;
  receivedAt: Date;
}

/** Every stored event of one resource, in gateway order: the (provider, resource_id) index. */
export async function findEventsOfResource(db: SqlExecutor, provider: string, resourceId: string, limit: number): Promise<ResourceEvent[]> {
  const { rows } = await db.executeSql<{ id: number; event_id: string; event_type: string; status: string; occurred_at_ms: number; received_at_ms: number }>(
    `select id::float8 as id, event_id, event_type, status, ${epochMs('occurred_at')} as occurred_at_ms, ${epochMs('received_at')} as received_at_ms
     from webhook_inbox where provider = $1 and resource_id = $2
     order by webhook_inbox.occurred_at, webhook_inbox.id limit $3`,
    [provider, resourceId, limit],
  );
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    occurredAt: dateOf(r.occurred_at_ms),
    receivedAt: dateOf(r.received_at_ms),
  }));
}

/**
 * A processed row of the same resource, with what it meant when processed (fact; null: not
 * recorded). Its payload is read only when no fact was recorded (null otherwise).
 */
export interface KnownResourceEventRow extends InboxEventRow {
  fact: unknown;
}

export interface ResourceKey {
  provider: string;
  resourceId: string;
}

/**
 * The resources' events whose facts are known, except the batch's own: processed or ignored once
 * (processed_at stays set when a replay puts a row back to pending, so replaying never hides a
 * fact the payment already reflects). Served by the (provider, resource_id) index.
 *
 * The batch's own rows are left out here, not in the statement: `id <> all(…)` with a batch's
 * hundred ids made PostgreSQL estimate each id against each partition's statistics, ~30 ms of
 * planning per batch, most of processing's database time (bench/README.md#where-the-time-goes).
 * Own rows come back only when a replay set them pending after they were processed.
 *
 * `notCarriedOnly`: only rows settled before payment_facts existed that the one-time carry-over
 * has not reached (webhook_inbox.fact is where their facts still are).
 */
export async function findKnownResourceEvents(
  tx: SqlExecutor,
  resources: readonly ResourceKey[],
  exceptIds: readonly number[],
  options: { notCarriedOnly?: boolean } = {},
): Promise<KnownResourceEventRow[]> {
  if (resources.length === 0) return [];
  const keys = JSON.stringify(resources.map((r) => ({ provider: r.provider, resource_id: r.resourceId })));
  // The payload only where no fact was recorded: the fact is what later folds read, and a
  // charge's history is read once per event of it, so payloads would dominate the transfer.
  const { rows } = await tx.executeSql<StoredEventRow & { fact: unknown }>(
    `select ${storedEventColumns('case when fact is null then payload end')}, fact
     from webhook_inbox
     where (provider, resource_id) in (
             select k.provider, k.resource_id from jsonb_to_recordset($1::jsonb) as k(provider text, resource_id text))
       and (status in (${SETTLED_STATUS_LIST}) or processed_at is not null)${options.notCarriedOnly ? ` and ${NOT_CARRIED_YET}` : ''}`,
    [keys],
  );
  const own = new Set(exceptIds);
  return rows.filter((row) => !own.has(row.id)).map((row) => ({ ...toInboxEvent(row), fact: row.fact }));
}
