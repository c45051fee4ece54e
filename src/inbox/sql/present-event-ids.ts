import type { SqlExecutor } from '../../db/client.ts';

/**
 * Which of one provider's event ids the inbox already knows: probes of webhook_event_keys' primary
 * key, the table that decides what is a duplicate. It outlives the payloads, so an event whose row
 * retention has purged is present too (storing it again would be refused as a duplicate anyway).
 */
export async function findPresentEventIds(db: SqlExecutor, provider: string, eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const { rows } = await db.executeSql<{ event_id: string }>('select event_id from webhook_event_keys where provider = $1 and event_id = any($2::text[])', [
    provider,
    [...eventIds],
  ]);
  return new Set(rows.map((row) => row.event_id));
}
