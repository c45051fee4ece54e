import type { SqlExecutor } from '../../db/client.ts';

/** Which of one provider's event ids the inbox holds: probes of the (provider, event_id) unique index. */
export async function findPresentEventIds(db: SqlExecutor, provider: string, eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const { rows } = await db.executeSql<{ event_id: string }>('select event_id from webhook_inbox where provider = $1 and event_id = any($2::text[])', [provider, [...eventIds]]);
  return new Set(rows.map((row) => row.event_id));
}
