import type { SqlExecutor } from '../../db/client.ts';
import { errorShapeSql } from './error-shape.ts';
import { LISTED_EVENT_COLUMNS, type ListedEvent, type ListedEventRow, toListedEvent } from './event-columns.ts';
import { Values, where } from './statement.ts';

export interface ErrorShapeCount {
  provider: string;
  /** The error with what differs per event replaced (error-shape.ts), at most 300 characters. */
  shape: string;
  n: number;
  /** The group's newest failed event. */
  example: { id: number; eventId: string; error: string | null };
}

/**
 * Failed rows by provider and error shape, all time, most common first, each group with its
 * newest row as the example: the failed rows come off the (status, received_at) index (a probe
 * per month partition, then the failed rows themselves), each group's example by primary key
 * and its received_at. By id alone the lookup would probe every month's primary key for every
 * group (webhook_inbox is partitioned on received_at): with the row's received_at it reads the
 * one partition that holds it.
 */
export async function countFailedByErrorShape(db: SqlExecutor, filter: { provider?: string; account?: string }): Promise<ErrorShapeCount[]> {
  const values = new Values();
  const shape = `left(${errorShapeSql(`coalesce(last_error, '(no error recorded)')`, values)}, 300)`;
  const { rows } = await db.executeSql<{ provider: string; shape: string; n: number; id: number; event_id: string; last_error: string | null }>(
    `with failed as (
       select id, received_at, provider, ${shape} as shape
       from webhook_inbox
       ${where([`status = 'failed'`, filter.provider ? `provider = ${values.add(filter.provider)}` : undefined, filter.account ? `account = ${values.add(filter.account)}` : undefined])}
     ), shapes as (
       select provider, shape, count(*)::int as n, max(id) as example_id, (array_agg(received_at order by id desc))[1] as example_received_at
       from failed group by provider, shape
     )
     select s.provider, s.shape, s.n, w.id::float8 as id, w.event_id, w.last_error
     from shapes s join webhook_inbox w on w.id = s.example_id and w.received_at = s.example_received_at
     order by s.n desc, s.provider, s.shape`,
    values.list,
  );
  return rows.map((r) => ({ provider: r.provider, shape: r.shape, n: r.n, example: { id: r.id, eventId: r.event_id, error: r.last_error } }));
}

export interface FailedEvent extends ListedEvent {
  lastError: string | null;
}

/** The newest failed rows first: a backward walk of the (status, received_at) index. */
export async function findFailedEvents(db: SqlExecutor, options: { provider?: string; limit: number }): Promise<FailedEvent[]> {
  const values = new Values();
  const { rows } = await db.executeSql<ListedEventRow & { last_error: string | null }>(
    `select ${LISTED_EVENT_COLUMNS}, last_error
     from webhook_inbox
     ${where([`status = 'failed'`, options.provider ? `provider = ${values.add(options.provider)}` : undefined])}
     order by received_at desc
     limit ${values.add(options.limit)}`,
    values.list,
  );
  return rows.map((r) => ({ ...toListedEvent(r), lastError: r.last_error }));
}
