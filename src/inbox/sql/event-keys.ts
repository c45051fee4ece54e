import type { SqlExecutor } from '../../db/client.ts';

/**
 * Deletes up to `limit` of one provider's dedupe keys received before `cutoff`, oldest first, on
 * the (provider, received_at) index. A key whose event is still in webhook_inbox stays, whatever
 * its age: every stored row keeps its key, so a resend of it can never be stored a second time.
 * Answers how many were deleted.
 */
export async function deleteExpiredEventKeys(tx: SqlExecutor, provider: string, cutoff: Date, limit: number): Promise<number> {
  const { rows } = await tx.executeSql<{ deleted: number }>(
    `with expired as (
       delete from webhook_event_keys
       where (provider, event_id) in (
         select k.provider, k.event_id from webhook_event_keys k
         where k.provider = $1 and k.received_at < $2::timestamptz
           and not exists (select 1 from webhook_inbox i where i.provider = k.provider and i.event_id = k.event_id)
         order by k.received_at
         limit $3)
       returning 1)
     select count(*)::int as deleted from expired`,
    [provider, cutoff.toISOString(), limit],
  );
  return rows[0]!.deleted;
}
