import { type Database, drizzleExecutor } from '../db/client.ts';
import { deleteExpiredEventKeys } from '../inbox/sql/event-keys.ts';

export interface KeyPurgeRequest {
  provider: string;
  /** Keys received strictly before this instant are deleted (unless their event is still stored). */
  cutoff: Date;
  /** Keys per transaction. */
  batchSize: number;
  signal?: AbortSignal;
}

/**
 * The second tier of retention: one provider's dedupe keys past its `keyRetentionDays`. Nothing is
 * archived (a key says only that an event was received: the archive of its payload, written when
 * the payload went, carries the same key). Small transactions, like the payloads' purge. Answers
 * how many keys were deleted.
 */
export async function purgeEventKeys(db: Database, request: KeyPurgeRequest): Promise<number> {
  let deleted = 0;
  for (;;) {
    if (request.signal?.aborted) return deleted;
    const batch = await db.transaction((transaction) =>
      deleteExpiredEventKeys(drizzleExecutor(transaction), request.provider, request.cutoff, request.batchSize),
    );
    deleted += batch;
    if (batch < request.batchSize) return deleted;
  }
}
