import type { SqlExecutor } from '../../db/client.ts';
import type { EmbeddedJobInsert } from '../../queue/embedded-job-insert.ts';
import { JobNotCreatedError } from '../../queue/enqueue.ts';
import { singletonKeyFor } from '../../queue/queues.ts';
import type { EventRow } from '../event-row.ts';
import { dateOf, epochMs } from './statement.ts';

export interface InsertedEvent {
  id: number;
  provider: string;
  eventId: string;
  resourceId: string | null;
  receivedAt: Date;
}

const COLUMNS_PER_ROW = 13;

/**
 * An unused slot's values. postgres.js keeps a connection's prepared statements by their text AND
 * the types it infers from the values: a Buffer is bytea, a boolean is boolean, anything else
 * (null, a string) is left for the server to decide. Slots of all NULLs made every batch size its
 * own statement (a batch of 40 and one of 41 differed in where the untyped NULLs began), each
 * prepared anew and planned from scratch; with a Buffer and a boolean in the same places as in a
 * real row, one statement per power of two serves every batch size, as intended.
 */
const UNUSED_ROW: readonly (string | Buffer | boolean | null)[] = [null, null, null, null, null, Buffer.alloc(0), null, false, null, null, null, null, null];

/** The statement's guard against a job pg-boss did not create (see storeNewEvents). */
const DIVISION_BY_ZERO = '22012';

/**
 * The statement for batches of up to `rows` events. Its text depends only on `rows`, a power of
 * two (and on the queue's job insert, fixed at start), so a connection prepares at most a handful
 * of them once and then each batch is a single Bind/Execute round trip with no parse or plan.
 *
 * Why VALUES and not one JSON parameter (`json_to_recordset`): prepared VALUES costs the backend
 * about half the CPU per row (docs/decisions/009-prepared-values-over-a-json-parameter.md), because the JSON
 * parameter parses the body as JSON twice more and decodes the raw body from a JSON string.
 * Each value arrives in its column's own text form: payload is parsed once, into jsonb; raw_body
 * travels as hex and is stored as the exact bytes.
 *
 * Unused slots are NULL rows that the WHERE drops (provider is NOT NULL in every real row).
 */
function storeStatementFor(rows: number, jobs: EmbeddedJobInsert): string {
  const tuples = Array.from({ length: rows }, (_, row) => {
    const $ = (column: number) => `$${row * COLUMNS_PER_ROW + column}`;
    // text::jsonb, not a jsonb parameter: the serialised payload must reach PostgreSQL unchanged
    // whatever jsonb serializer the client was configured with (drizzle replaces postgres.js's).
    return `(${$(1)}::text, ${$(2)}::text, ${$(3)}::text, ${$(4)}::text, ${$(5)}::text::jsonb, ${$(6)}::bytea, ${$(7)}::timestamptz, ${$(8)}::boolean, ${$(9)}::text, ${$(10)}::text, ${$(11)}::text::jsonb, ${$(12)}::text, ${$(13)}::text)`;
  });
  // Each stored event's job, as queue/queues.ts webhookJob() describes it: the singleton key comes
  // from the same function (a parameter), the data names the row the statement just wrote.
  const jobsJson = `select coalesce(json_agg(json_build_object(
        'data', json_build_object('inboxId', stored.id, 'receivedAtMs', ${epochMs('stored.received_at')}),
        'singletonKey', batch.singleton_key)), '[]'::json)
      from stored join batch using (provider, event_id)`;
  // The key is claimed first (webhook_event_keys outlives the payloads): only requests whose key
  // was new are stored. The inbox itself cannot refuse a duplicate: it is partitioned by month, and
  // a unique index there would have to include received_at.
  return `with batch as (
      select * from (values ${tuples.join(', ')}) as v (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, payload_lossy, fingerprint, source, verification, singleton_key, account)
      where v.provider is not null),
    new_keys as (
      insert into webhook_event_keys (provider, event_id, fingerprint)
      select provider, event_id, fingerprint from batch
      on conflict (provider, event_id) do nothing
      returning provider, event_id),
    stored as (
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, payload_lossy, fingerprint, source, verification, account)
      select provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, payload_lossy, fingerprint, source, verification, account
      from batch join new_keys using (provider, event_id)
      returning id, provider, event_id, resource_id, received_at),
    jobs as (${jobs.insertFrom(jobsJson)}),
    notified as (${jobs.notify ?? 'select 1 where false'})
    select id::text as id, provider, event_id, resource_id, ${epochMs('received_at')} as received_at_ms,
      -- Evaluated once, with the first row: aborts the whole statement (nothing stored) if pg-boss
      -- refused any job, so no inbox row ever commits without its job.
      1 / (case when (select count(*) from jobs) = (select count(*) from stored) then 1 else 0 end) as every_event_has_its_job,
      (select count(*) from notified) as notified
    from stored`;
}

const statements = new WeakMap<EmbeddedJobInsert, Map<number, string>>();
function statementFor(rows: number, jobs: EmbeddedJobInsert): string {
  let texts = statements.get(jobs);
  if (texts === undefined) statements.set(jobs, (texts = new Map()));
  let text = texts.get(rows);
  if (text === undefined) texts.set(rows, (text = storeStatementFor(rows, jobs)));
  return text;
}

interface ReturnedRow {
  id: string;
  provider: string;
  event_id: string;
  resource_id: string | null;
  received_at_ms: number;
}

/**
 * Stores the events whose key is new, with their processing jobs, in one statement that commits
 * on its own (`pool`: a postgresExecutor on the pool, for the prepared statement; never a
 * transaction's, the atomicity is the statement's). The rows
 * that come back are the new ones; anything absent was already received (its payload may be gone
 * since: the key outlives it). The keys' primary key decides, so concurrent requests of one
 * event can never both be "new". The rows arrive serialised (toEventRow), so nothing here can
 * throw for what an event contains before the statement is sent. Duplicates within `events` must
 * have been removed by the caller (the job join pairs rows by key).
 */
export async function storeNewEvents(pool: SqlExecutor, jobs: EmbeddedJobInsert, events: readonly EventRow[]): Promise<InsertedEvent[]> {
  if (events.length === 0) return [];
  const rows = 2 ** Math.ceil(Math.log2(events.length));
  const parameters: (string | Buffer | boolean | null)[] = [];
  for (const e of events) {
    parameters.push(
      e.provider,
      e.eventId,
      e.eventType,
      e.resourceId,
      e.payloadJson,
      e.rawBody,
      e.occurredAt,
      e.payloadLossy,
      e.fingerprint,
      e.source,
      e.verificationJson,
      singletonKeyFor(e),
      e.account,
    );
  }
  for (let row = events.length; row < rows; row += 1) parameters.push(...UNUSED_ROW);
  let stored: ReturnedRow[];
  try {
    ({ rows: stored } = await pool.executeSql<ReturnedRow>(statementFor(rows, jobs), parameters));
  } catch (error) {
    // The statement divides by zero only in its guard: a refused job, not the events' fault.
    if ((error as { code?: unknown }).code === DIVISION_BY_ZERO) throw new JobNotCreatedError(events.length, undefined, { cause: error });
    throw error;
  }
  // bigserial ids come back as text (postgres.js leaves int8 as a string); they stay below 2^53.
  return stored.map((row) => ({
    id: Number(row.id),
    provider: row.provider,
    eventId: row.event_id,
    resourceId: row.resource_id,
    receivedAt: dateOf(row.received_at_ms),
  }));
}
