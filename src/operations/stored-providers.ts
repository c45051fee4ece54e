import { sql } from 'drizzle-orm';
import type { Executor } from '../db/client.ts';

/**
 * The distinct providers in the inbox, by hopping along the (provider, event_id) unique index one
 * provider at a time (a loose index scan): a few index probes, not a scan of the table.
 */
export async function listStoredProviders(db: Executor): Promise<string[]> {
  const rows = await db.execute<{ provider: string }>(sql`
    with recursive p(provider) as (
      (select provider from webhook_inbox order by provider limit 1)
      union all
      select (select w.provider from webhook_inbox w where w.provider > p.provider order by w.provider limit 1)
      from p where p.provider is not null
    )
    select provider from p where provider is not null`);
  return rows.map((r) => r.provider);
}
