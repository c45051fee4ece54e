import type { SqlExecutor } from '../../db/client.ts';
import type { EventDecisionName } from '../../db/schema.ts';
import { EVERY_STATUS } from './counts.ts';
import { Values, where } from './statement.ts';

export interface DecisionCount {
  provider: string;
  decision: EventDecisionName;
  count: number;
  /** The newest such event, to look at with `inboxctl show <provider> <eventId>`. */
  latestEventId: string;
}

/**
 * Events received in the window, per provider and decision (rows without one are left out).
 * With a window every status is named, so it walks the (status, received_at) index like the
 * status counts; the newest event of each group is one lookup by id afterwards, not an aggregate
 * of every event id. That lookup repeats the window's bound (true of the row: it was counted in the
 * window) so it probes only the partitions of the window's months, not every month's primary key.
 */
export async function countDecisionsByProvider(db: SqlExecutor, filter: { provider?: string; account?: string; since?: Date }): Promise<DecisionCount[]> {
  const values = new Values();
  const since = filter.since ? `${values.add(filter.since.toISOString())}::timestamptz` : undefined;
  const { rows } = await db.executeSql<DecisionCount>(
    `with counted as (
       select provider, decision, count(*)::int as count, max(id) as latest_id from webhook_inbox
       ${where([
         'decision is not null',
         since ? EVERY_STATUS : undefined,
         since ? `received_at >= ${since}` : undefined,
         filter.provider ? `provider = ${values.add(filter.provider)}` : undefined,
         filter.account ? `account = ${values.add(filter.account)}` : undefined,
       ])}
       group by provider, decision
     )
     select c.provider, c.decision, c.count, w.event_id as "latestEventId"
     from counted c join webhook_inbox w on w.id = c.latest_id${since ? ` and w.received_at >= ${since}` : ''}
     order by c.provider, c.count desc, c.decision`,
    values.list,
  );
  return rows;
}
