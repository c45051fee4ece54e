import type { SqlExecutor } from '../../db/client.ts';
import { dateOf, epochMs } from './statement.ts';

export interface LastWebhookRequest {
  provider: string;
  /** received_at of the provider's newest row a webhook request brought (source webhook). */
  receivedAt: Date;
}

/** The provider's newest row from a webhook request received since `bound` (or ever, without one), as epoch ms. */
const newestWebhookRequest = (bound?: string) =>
  `(select ${epochMs('w.received_at')} from webhook_inbox w
    where w.provider = p.provider and w.source = 'webhook'${bound ? ` and w.received_at >= ${bound}` : ''}
    order by w.received_at desc limit 1)`;

/**
 * The newest webhook request of each provider named, all time: per provider one backward step on
 * the partial webhook_inbox_last_delivery_idx (provider, received_at) where source = 'webhook' of
 * every month partition (the default partition keeps PostgreSQL from walking the months newest
 * first and stopping at the first hit). With `lookFirstSince` (the window `stats` reports on),
 * each provider is looked for in that window first, on the partitions it overlaps; only one that
 * sent nothing in it costs the all-time walk (coalesce runs its second subquery only when
 * the first found nothing). Providers with no sent row are left out. Backfilled rows do not
 * count: they say the gateway did NOT send.
 */
export async function findLastWebhookRequests(
  db: SqlExecutor,
  providers: readonly string[],
  options: { lookFirstSince?: Date } = {},
): Promise<LastWebhookRequest[]> {
  if (providers.length === 0) return [];
  const values: unknown[] = [[...providers]];
  let newest = newestWebhookRequest();
  if (options.lookFirstSince) {
    values.push(options.lookFirstSince.toISOString());
    newest = `coalesce(${newestWebhookRequest('$2::timestamptz')}, ${newest})`;
  }
  const { rows } = await db.executeSql<{ provider: string; received_ms: number | null }>(
    `select p.provider, ${newest} as received_ms from unnest($1::text[]) as p(provider)`,
    values,
  );
  return rows.flatMap((row) => (row.received_ms === null ? [] : [{ provider: row.provider, receivedAt: dateOf(row.received_ms) }]));
}
