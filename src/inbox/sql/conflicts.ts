import type { SqlExecutor } from '../../db/client.ts';
import type { StoredEvent } from '../../gateways/shared/webhook-driver.ts';
import type { MeaningDifference } from '../event-fingerprint.ts';
import type { IncomingEvent } from '../incoming-event.ts';
import { Values, dateOf, epochMs, where } from './statement.ts';
import { parseJsonText } from '../../format/json-parse.ts';

/** A stored event whose fingerprint is not the one a duplicate request of it carries. */
export interface StoredEventOfOtherFingerprint extends StoredEvent {
  inboxId: number;
  /** Index of the duplicate request (in the list passed in) that disagrees with it. */
  duplicateIndex: number;
}

interface OtherFingerprintRow {
  duplicate_index: number;
  inbox_id: string;
  event_type: string;
  resource_id: string | null;
  occurred_at_ms: number;
  payload: string;
  payload_lossy: boolean;
}

// Constant text, so each connection prepares it once. One lookup per request on the keys' primary
// key, which holds the first request's fingerprint; the stored event (and its payload) is read only
// for the keys that disagree. A key's fingerprint of null (taken over from a row stored before
// fingerprints) never compares unequal: not judged. Neither is a key whose payload retention has
// already deleted: there is nothing left to compare the meaning with, or to attach a conflict to.
const SELECT_OTHER_FINGERPRINTS = `
  select d.ordinal::int - 1 as duplicate_index, s.id::text as inbox_id, s.event_type, s.resource_id,
         (extract(epoch from s.occurred_at) * 1000)::float8 as occurred_at_ms, s.payload::text as payload, s.payload_lossy
  from unnest($1::text[], $2::text[], $3::text[]) with ordinality as d(provider, event_id, fingerprint, ordinal)
  join webhook_event_keys k on k.provider = d.provider and k.event_id = d.event_id
  join webhook_inbox s on s.provider = d.provider and s.event_id = d.event_id
  where k.fingerprint <> d.fingerprint`;

/**
 * The stored events that duplicate requests disagree with. Runs in the batch's transaction after
 * its insert: in READ COMMITTED this statement takes a new snapshot, so it sees both the rows the
 * insert just wrote and the ones a concurrent transaction committed while the insert waited on
 * them (ON CONFLICT waits for that transaction to end before it decides).
 */
export async function selectStoredEventsOfOtherFingerprint(tx: SqlExecutor, duplicates: readonly IncomingEvent[]): Promise<StoredEventOfOtherFingerprint[]> {
  const { rows } = await tx.executeSql<OtherFingerprintRow>(SELECT_OTHER_FINGERPRINTS, [
    duplicates.map((d) => d.provider),
    duplicates.map((d) => d.event.eventId),
    duplicates.map((d) => d.fingerprint),
  ]);
  return rows.map((row) => ({
    duplicateIndex: row.duplicate_index,
    inboxId: Number(row.inbox_id),
    provider: duplicates[row.duplicate_index]!.provider,
    eventId: duplicates[row.duplicate_index]!.event.eventId,
    eventType: row.event_type,
    resourceId: row.resource_id,
    occurredAt: new Date(row.occurred_at_ms),
    payload: parseJsonText(row.payload),
    payloadLossy: row.payload_lossy,
  }));
}

export interface ConflictToRecord {
  inboxId: number;
  fingerprint: string;
  differences: MeaningDifference[];
  rawBody: Buffer;
}

/**
 * One statement for all of a batch's conflicts. Provider and event id are copied from the stored
 * row, so nothing but the differences (sanitised) and the base64 bytes travel inside the JSON.
 */
export async function insertConflicts(tx: SqlExecutor, conflicts: readonly ConflictToRecord[]): Promise<void> {
  if (conflicts.length === 0) return;
  const rows = JSON.stringify(
    conflicts.map((c) => ({ inbox_id: c.inboxId, fingerprint: c.fingerprint, differences: c.differences, raw_body: c.rawBody.toString('base64') })),
  );
  await tx.executeSql(
    `insert into webhook_inbox_conflicts (inbox_id, inbox_received_at, provider, event_id, fingerprint, differences, raw_body)
     select s.id, s.received_at, s.provider, s.event_id, r.fingerprint, r.differences, decode(r.raw_body, 'base64')
     from jsonb_to_recordset($1::text::jsonb) as r(inbox_id bigint, fingerprint text, differences jsonb, raw_body text)
     join webhook_inbox s on s.id = r.inbox_id`,
    [rows],
  );
}

/** A duplicate request of a stored event that said something else (see webhook_inbox_conflicts). */
export interface ConflictDetails {
  id: number;
  receivedAt: Date;
  differences: MeaningDifference[];
  /** The bytes that request carried, exactly. */
  rawBody: Buffer;
}

/** The conflicts of one stored event, oldest first, on the inbox_id index. */
export async function findConflictsOfEvent(db: SqlExecutor, inboxId: number): Promise<ConflictDetails[]> {
  const { rows } = await db.executeSql<{ id: number; received_at_ms: number; differences: MeaningDifference[]; raw_body: Buffer }>(
    `select id::float8 as id, ${epochMs('received_at')} as received_at_ms, differences, raw_body
     from webhook_inbox_conflicts where inbox_id = $1 order by webhook_inbox_conflicts.id`,
    [inboxId],
  );
  return rows.map((row) => ({ id: row.id, receivedAt: dateOf(row.received_at_ms), differences: row.differences, rawBody: Buffer.from(row.raw_body) }));
}

export interface ConflictCount {
  provider: string;
  count: number;
  /** The most recent one's event: what to `inboxctl show` first. */
  latestEventId: string;
}

/** Conflicts received since `since` (all time when undefined) per provider, on the received_at index. */
export async function countConflictsByProvider(db: SqlExecutor, filter: { provider?: string; since?: Date }): Promise<ConflictCount[]> {
  const values = new Values();
  const { rows } = await db.executeSql<ConflictCount>(
    `select provider, count(*)::int as count,
            (array_agg(event_id order by received_at desc, id desc))[1] as "latestEventId"
     from webhook_inbox_conflicts
     ${where([
       filter.since ? `received_at >= ${values.add(filter.since.toISOString())}::timestamptz` : undefined,
       filter.provider ? `provider = ${values.add(filter.provider)}` : undefined,
     ])}
     group by provider
     order by count(*) desc, provider asc`,
    values.list,
  );
  return rows;
}
