import type { SqlExecutor } from '../db/client.ts';
import { type MeaningDifference, type PaymentFactReader, eventMeaning, meaningDifferences } from './event-fingerprint.ts';
import type { IncomingEvent } from './incoming-event.ts';
import { type ConflictToRecord, type StoredEventOfOtherFingerprint, insertConflicts, selectStoredEventsOfOtherFingerprint } from './sql/conflicts.ts';

/** A duplicate request that says something else than the stored event of its key. */
export interface ConflictingDuplicate {
  /** The stored event it contradicts (the one the inbox processes). */
  inboxId: number;
  differences: MeaningDifference[];
}

export interface ConflictRecorder {
  /**
   * After a batch's statement committed, for the requests that stored nothing (never called for
   * a batch without duplicates): records each one whose meaning differs from the stored
   * event, and says which did (same order as `duplicates`; undefined: an ordinary resend).
   */
  recordConflictingDuplicates(tx: SqlExecutor, duplicates: readonly IncomingEvent[]): Promise<(ConflictingDuplicate | undefined)[]>;
}

export interface ConflictRecorderDeps {
  /** The driver that reads a provider's events (the meaning of a stored payload); undefined if none is configured. */
  driverOf(provider: string): PaymentFactReader | undefined;
}

// jsonb cannot hold U+0000 or a lone surrogate; a difference is for a human to read, so such a
// character in a payload-derived value is shown as U+FFFD rather than failing the batch.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const storable = (value: string | number | null) => (typeof value === 'string' ? value.replace(UNSTORABLE, '\uFFFD') : value);

/**
 * The fingerprints are compared in SQL; both meanings are then recomputed with the driver in use
 * now, and only a real difference counts. That second look also keeps a fingerprint computed by
 * an older version of a driver (or of the fingerprint) from turning ordinary resends into conflicts.
 */
function conflictOf(deps: ConflictRecorderDeps, duplicate: IncomingEvent, stored: StoredEventOfOtherFingerprint): ConflictingDuplicate | undefined {
  const driver = deps.driverOf(duplicate.provider);
  // Same provider, same id: whether the time is the request's own is the driver's rule for both.
  const occurredAtIsRequestTime = duplicate.event.occurredAtIsRequestTime === true;
  const before = eventMeaning({ ...stored, occurredAtIsRequestTime }, driver);
  const now = eventMeaning({ provider: duplicate.provider, ...duplicate.event }, driver);
  const differences = meaningDifferences(before, now).map((d) => ({ ...d, stored: storable(d.stored), received: storable(d.received) }));
  return differences.length === 0 ? undefined : { inboxId: stored.inboxId, differences };
}

export function createConflictRecorder(deps: ConflictRecorderDeps): ConflictRecorder {
  return {
    async recordConflictingDuplicates(tx, duplicates) {
      const result: (ConflictingDuplicate | undefined)[] = duplicates.map(() => undefined);
      if (duplicates.length === 0) return result;
      const toRecord: ConflictToRecord[] = [];
      for (const stored of await selectStoredEventsOfOtherFingerprint(tx, duplicates)) {
        const duplicate = duplicates[stored.duplicateIndex]!;
        const conflict = conflictOf(deps, duplicate, stored);
        if (!conflict) continue;
        result[stored.duplicateIndex] = conflict;
        toRecord.push({ inboxId: conflict.inboxId, fingerprint: duplicate.fingerprint, differences: conflict.differences, rawBody: duplicate.rawBody });
      }
      await insertConflicts(tx, toRecord);
      return result;
    },
  };
}
