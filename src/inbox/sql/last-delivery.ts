import type { SqlExecutor } from '../../db/client.ts';
import { dateOf, epochMs } from './statement.ts';

export interface LastDelivery {
  provider: string;
  /** received_at of the provider's newest delivered (source webhook) row. */
  receivedAt: Date;
}

/**
 * The newest webhook delivery of each provider named: per provider one backward step on the
 * partial webhook_inbox_last_delivery_idx (provider, received_at) where source = 'webhook', so the
 * cost is a few index probes per provider whatever the table's size. Providers with no delivered
 * row are left out. Backfilled rows do not count: they say the gateway did NOT deliver.
 */
export async function findLastDeliveries(db: SqlExecutor, providers: readonly string[]): Promise<LastDelivery[]> {
  if (providers.length === 0) return [];
  const { rows } = await db.executeSql<{ provider: string; received_ms: number | null }>(
    `select p.provider,
            (select ${epochMs('w.received_at')} from webhook_inbox w
             where w.provider = p.provider and w.source = 'webhook'
             order by w.received_at desc limit 1) as received_ms
     from unnest($1::text[]) as p(provider)`,
    [[...providers]],
  );
  return rows.flatMap((row) => (row.received_ms === null ? [] : [{ provider: row.provider, receivedAt: dateOf(row.received_ms) }]));
}
