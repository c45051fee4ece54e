import type { SqlExecutor } from '../../db/client.ts';
import type { EventDecisionName, EventSource, InboxStatus } from '../../db/schema.ts';
import { NOT_CARRIED_YET } from './carry-over.ts';
import { Values, isoMicros, where } from './statement.ts';

/**
 * An inbox row with everything that is not exact in JSON as text: what an archive line carries
 * (operations/archive.ts). Timestamps keep PostgreSQL's microseconds, the payload is the jsonb as
 * PostgreSQL renders it, the raw body is base64.
 */
export interface ExactInboxRow {
  id: number;
  provider: string;
  event_id: string;
  event_type: string;
  resource_id: string | null;
  status: InboxStatus;
  attempts: number;
  last_error: string | null;
  occurred_at: string;
  received_at: string;
  processed_at: string | null;
  payload_json: string;
  /** Absent in archives written before the column existed: false. */
  payload_lossy?: boolean;
  raw_body_base64: string;
  /** Absent in older archives. */
  fact_json?: string | null;
  /** Absent in older archives. */
  fingerprint?: string | null;
  /** Absent in archives written before the column existed: `webhook`. */
  source?: EventSource;
  /** Absent in older archives. */
  decision?: EventDecisionName | null;
  /** The jsonb as text; absent in older archives. */
  decision_detail_json?: string | null;
  /** The proof of verification as jsonb text. Absent in older archives. */
  verification_json?: string | null;
}

export const EXACT_COLUMNS = `id::float8 as id, provider, event_id, event_type, resource_id, status, attempts, last_error,
  ${isoMicros('occurred_at')} as occurred_at, ${isoMicros('received_at')} as received_at, ${isoMicros('processed_at')} as processed_at,
  payload::text as payload_json, payload_lossy, raw_body, fact::text as fact_json, fingerprint, source,
  decision, decision_detail::text as decision_detail_json, verification::text as verification_json`;

/**
 * The next batch of one provider's rows in one status received before `cutoff`, oldest first, on
 * the (status, received_at) index; `from` (the last batch's newest received_at, microseconds) lets
 * the scan start where the previous batch ended instead of walking the index entries of rows just
 * deleted. Locked rows (a replay in flight) are skipped.
 */
export async function lockExpiredBatch(
  tx: SqlExecutor,
  provider: string,
  status: InboxStatus,
  cutoff: Date,
  from: string | undefined,
  limit: number,
): Promise<ExactInboxRow[]> {
  const values = new Values();
  const { rows } = await tx.executeSql<Omit<ExactInboxRow, 'raw_body_base64'> & { raw_body: Buffer }>(
    `select ${EXACT_COLUMNS} from webhook_inbox
     ${where([
       `status = ${values.add(status)}`,
       `received_at < ${values.add(cutoff.toISOString())}::timestamptz`,
       from ? `received_at >= ${values.add(from)}::timestamptz` : undefined,
       `provider = ${values.add(provider)}`,
       // Its fact must be in payment_facts before its row goes (carry-over.ts).
       `not ${NOT_CARRIED_YET}`,
     ])}
     order by webhook_inbox.received_at, webhook_inbox.id
     limit ${values.add(limit)}
     for update skip locked`,
    values.list,
  );
  return rows.map(({ raw_body, ...row }) => ({ ...row, raw_body_base64: Buffer.from(raw_body).toString('base64') }));
}

export async function deleteEvents(tx: SqlExecutor, ids: readonly number[]): Promise<void> {
  await tx.executeSql('delete from webhook_inbox where id = any($1::bigint[])', [[...ids]]);
}

/** Per UTC day of receipt, how many of one provider's rows in these statuses were received before `cutoff`. */
export async function countExpiredByDay(
  db: SqlExecutor,
  provider: string,
  statuses: readonly InboxStatus[],
  cutoff: Date,
): Promise<Array<{ day: string; events: number }>> {
  const { rows } = await db.executeSql<{ day: string; events: number }>(
    `select to_char(received_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*)::int as events
     from webhook_inbox
     where status = any($1::text[]) and received_at < $2::timestamptz and provider = $3 and not ${NOT_CARRIED_YET}
     group by 1 order by 1`,
    [[...statuses], cutoff.toISOString(), provider],
  );
  return rows;
}

const COLUMNS_PER_ROW = 20;

/**
 * One multi-row INSERT of the rows whose id, and whose provider + event id, the inbox does not hold
 * (a partitioned inbox has no unique index to conflict on for either). Answers how many were
 * inserted. The two checks and the insert are not atomic: two restores of the same rows at the same
 * moment could both insert one (an operator's command, run once per file).
 */
export async function insertExactRowsIfAbsent(db: SqlExecutor, events: readonly ExactInboxRow[]): Promise<number> {
  if (events.length === 0) return 0;
  const values: unknown[] = [];
  const tuples = events.map((e, row) => {
    values.push(
      e.id,
      e.provider,
      e.event_id,
      e.event_type,
      e.resource_id,
      e.status,
      e.attempts,
      e.last_error,
      e.occurred_at,
      e.received_at,
      e.processed_at,
      e.payload_json,
      e.payload_lossy ?? false,
      Buffer.from(e.raw_body_base64, 'base64'),
      e.fact_json ?? null,
      e.fingerprint ?? null,
      e.source ?? 'webhook',
      e.decision ?? null,
      e.decision_detail_json ?? null,
      e.verification_json ?? null,
    );
    const $ = (column: number) => `$${row * COLUMNS_PER_ROW + column}`;
    return `(${$(1)}::bigint, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}::smallint, ${$(8)}, ${$(9)}::timestamptz, ${$(10)}::timestamptz,
      ${$(11)}::timestamptz, ${$(12)}::text::jsonb, ${$(13)}::boolean, ${$(14)}::bytea, ${$(15)}::text::jsonb, ${$(16)}, ${$(17)},
      ${$(18)}, ${$(19)}::text::jsonb, ${$(20)}::text::jsonb)`;
  });
  // A restored row gets its dedupe key back too if key retention has deleted it since, so that a
  // resend of it stays a duplicate (every inbox row has its key: webhook_event_keys).
  // Restored ids are the originals: restored into a database whose id sequence is behind them (a
  // fresh one), the sequence is moved past them, in this statement, so no committed row is ever
  // behind it whatever stops the restore later (the receiver would give its id to a new row:
  // the primary key is (id, received_at), so nothing would refuse it).
  const { rows } = await db.executeSql<{ restored: number }>(
    `with restored as (
       insert into webhook_inbox (id, provider, event_id, event_type, resource_id, status, attempts, last_error, occurred_at, received_at,
         processed_at, payload, payload_lossy, raw_body, fact, fingerprint, source, decision, decision_detail, verification)
       select * from (values ${tuples.join(', ')}) as v (id, provider, event_id, event_type, resource_id, status, attempts, last_error, occurred_at, received_at,
         processed_at, payload, payload_lossy, raw_body, fact, fingerprint, source, decision, decision_detail, verification)
       where not exists (select 1 from webhook_inbox i where i.id = v.id)
         and not exists (select 1 from webhook_inbox i where i.provider = v.provider and i.event_id = v.event_id)
       returning id, provider, event_id, fingerprint, received_at),
     keys as (
       insert into webhook_event_keys (provider, event_id, fingerprint, received_at)
       select provider, event_id, fingerprint, received_at from restored
       on conflict do nothing),
     sequence_past as (
       select setval(pg_get_serial_sequence('webhook_inbox', 'id'), max(id)) from restored
       having max(id) > (select last_value from webhook_inbox_id_seq))
     -- sequence_past named here: a CTE that modifies nothing runs only when it is read.
     select (select count(*)::int from restored) as restored, (select count(*) from sequence_past) as sequence_moved`,
    values,
  );
  return rows[0]!.restored;
}

/** How many of these events the inbox already has (by id, or by provider + event id: one provider per call). */
export async function countExistingEvents(db: SqlExecutor, events: readonly ExactInboxRow[]): Promise<number> {
  if (events.length === 0) return 0;
  const { rows } = await db.executeSql<{ id: number; provider: string; event_id: string }>(
    `select id::float8 as id, provider, event_id from webhook_inbox where id = any($1::bigint[])
     union all
     select id::float8 as id, provider, event_id from webhook_inbox where provider = $2 and event_id = any($3::text[])`,
    [events.map((e) => e.id), events[0]!.provider, events.map((e) => e.event_id)],
  );
  const present = new Set(rows.map((r) => `${r.provider}\u0000${r.event_id}`));
  const presentIds = new Set(rows.map((r) => r.id));
  return events.filter((e) => presentIds.has(e.id) || present.has(`${e.provider}\u0000${e.event_id}`)).length;
}
