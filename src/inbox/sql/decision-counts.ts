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
 * of every event id.
 */
export async function countDecisionsByProvider(db: SqlExecutor, filter: { provider?: string; since?: Date }): Promise<DecisionCount[]> {
  const values = new Values();
  const { rows } = await db.executeSql<DecisionCount>(
    `with counted as (
       select provider, decision, count(*)::int as count, max(id) as latest_id from webhook_inbox
       ${where([
         'decision is not null',
         filter.since ? EVERY_STATUS : undefined,
         filter.since ? `received_at >= ${values.add(filter.since.toISOString())}::timestamptz` : undefined,
         filter.provider ? `provider = ${values.add(filter.provider)}` : undefined,
       ])}
       group by provider, decision
     )
     select c.provider, c.decision, c.count, w.event_id as "latestEventId"
     from counted c join webhook_inbox w on w.id = c.latest_id
     order by c.provider, c.count desc, c.decision`,
    values.list,
  );
  return rows;
}
