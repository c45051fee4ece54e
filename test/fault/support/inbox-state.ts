import type postgres from 'postgres';
import type { StoredState } from './history.ts';

/** Inbox rows (and statuses) of the events whose ids start with `prefix`, read with the test's own client. */
export async function readStoredState(sql: postgres.Sql, prefix: string): Promise<StoredState> {
  const rows = await sql<{ event_id: string; n: number; status: string; stored_at: string }[]>`
    select event_id, count(*)::int as n, min(status) as status,
           (extract(epoch from min(received_at)) * 1000)::float8::text as stored_at
    from webhook_inbox where provider = 'stripe' and event_id like ${`${prefix}%`}
    group by event_id`;
  return {
    rows: new Map(rows.map((r) => [r.event_id, r.n])),
    statuses: new Map(rows.map((r) => [r.event_id, r.status])),
    storedAt: new Map(rows.map((r) => [r.event_id, Number(r.stored_at)])),
  };
}

/** Jobs queued for the inbox rows of `prefix` (one per stored event is the invariant). */
export async function countJobs(sql: postgres.Sql, prefix: string): Promise<{ rows: number; jobs: number; rowsWithoutJob: number }> {
  const [counts] = await sql<{ rows: number; jobs: number; without: number }[]>`
    with inbox as (select id from webhook_inbox where provider = 'stripe' and event_id like ${`${prefix}%`}),
    jobs as (select (data->>'inboxId')::bigint as inbox_id from pgboss.job where name = 'webhooks')
    select (select count(*)::int from inbox) as rows,
           (select count(*)::int from jobs where inbox_id in (select id from inbox)) as jobs,
           (select count(*)::int from inbox where id not in (select inbox_id from jobs)) as without`;
  return { rows: counts!.rows, jobs: counts!.jobs, rowsWithoutJob: counts!.without };
}

/** Effects per event: payment_transitions rows written by processing that event (one per status change). */
export async function readEffects(sql: postgres.Sql, prefix: string): Promise<Map<string, number>> {
  const rows = await sql<{ event_id: string; n: number }[]>`
    select i.event_id, count(t.id)::int as n
    from webhook_inbox i left join payment_transitions t on t.inbox_id = i.id
    where i.provider = 'stripe' and i.event_id like ${`${prefix}%`}
    group by i.event_id`;
  return new Map(rows.map((r) => [r.event_id, r.n]));
}

/** How many of the events of `prefix` are still waiting to be processed. */
export async function countUnfinished(sql: postgres.Sql, prefix: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from webhook_inbox where provider = 'stripe' and event_id like ${`${prefix}%`} and status = 'pending'`;
  return row!.n;
}
