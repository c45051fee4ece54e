import type { SqlExecutor } from '../../db/client.ts';
import type { EventRow } from '../event-row.ts';
import { dateOf, epochMs } from './statement.ts';

export interface InsertedEvent {
  id: number;
  provider: string;
  eventId: string;
  resourceId: string | null;
  receivedAt: Date;
}

const COLUMNS_PER_ROW = 11;

/**
 * The statement for batches of up to `rows` events. Its text depends only on `rows`, a power of
 * two, so a connection prepares at most a handful of them once and then each batch is a single
 * Bind/Execute round trip with no parse or plan. Drizzle's builder sent a new text for every batch
 * size, unprepared (so `tx` must be a postgresExecutor: db/client.ts): describe, wait, execute (two round trips) and a fresh plan every time.
 *
 * Why VALUES and not one JSON parameter (`json_to_recordset`): prepared VALUES costs the backend
 * about half the CPU per row (README, Benchmarks: "Design choices measured"), because the JSON
 * parameter parses the body as JSON twice more and decodes the raw body from a JSON string.
 * Each value arrives in its column's own text form: payload is parsed once, into jsonb; raw_body
 * travels as hex and is stored as the exact bytes. The JSON parameter only wins over *unprepared*
 * VALUES, which pays parse and plan per batch.
 *
 * Unused slots are NULL rows that the WHERE drops (provider is NOT NULL in every real row).
 */
function insertStatementFor(rows: number): string {
  const tuples = Array.from({ length: rows }, (_, row) => {
    const $ = (column: number) => `$${row * COLUMNS_PER_ROW + column}`;
    // text::jsonb, not a jsonb parameter: the serialised payload must reach PostgreSQL unchanged
    // whatever jsonb serializer the client was configured with (drizzle replaces postgres.js's).
    return `(${$(1)}::text, ${$(2)}::text, ${$(3)}::text, ${$(4)}::text, ${$(5)}::text::jsonb, ${$(6)}::bytea, ${$(7)}::timestamptz, ${$(8)}::boolean, ${$(9)}::text, ${$(10)}::text, ${$(11)}::text::jsonb)`;
  });
  // The key is claimed first (webhook_event_keys outlives the payloads): only deliveries whose key
  // was new are stored. The inbox itself cannot refuse a duplicate: it is partitioned by month, and
  // a unique index there would have to include received_at.
  return `with batch as (
      select * from (values ${tuples.join(', ')}) as v (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, payload_lossy, fingerprint, source, verification)
      where v.provider is not null),
    new_keys as (
      insert into webhook_event_keys (provider, event_id, fingerprint)
      select provider, event_id, fingerprint from batch
      on conflict (provider, event_id) do nothing
      returning provider, event_id)
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, payload_lossy, fingerprint, source, verification)
    select batch.* from batch join new_keys using (provider, event_id)
    returning id::text as id, provider, event_id, resource_id, ${epochMs('received_at')} as received_at_ms`;
}

const statements = new Map<number, string>();
function statementFor(rows: number): string {
  let text = statements.get(rows);
  if (text === undefined) statements.set(rows, (text = insertStatementFor(rows)));
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
 * INSERT … ON CONFLICT (provider, event_id) DO NOTHING RETURNING, into webhook_event_keys: the rows
 * that come back are the new ones; anything absent was already received (its payload may be gone
 * since: the key outlives it). The keys' primary key decides, so concurrent deliveries of one
 * event can never both be "new". The rows arrive serialised (toEventRow), so
 * nothing here can throw for what an event contains before the statement is sent.
 */
export async function insertEventsIfAbsent(tx: SqlExecutor, events: readonly EventRow[]): Promise<InsertedEvent[]> {
  if (events.length === 0) return [];
  const rows = 2 ** Math.ceil(Math.log2(events.length));
  const parameters: (string | Buffer | boolean | null)[] = [];
  for (const e of events) {
    parameters.push(e.provider, e.eventId, e.eventType, e.resourceId, e.payloadJson, e.rawBody, e.occurredAt, e.payloadLossy, e.fingerprint, e.source, e.verificationJson);
  }
  while (parameters.length < rows * COLUMNS_PER_ROW) parameters.push(null);
  const { rows: inserted } = await tx.executeSql<ReturnedRow>(statementFor(rows), parameters);
  // bigserial ids come back as text (postgres.js leaves int8 as a string); they stay below 2^53.
  return inserted.map((row) => ({ id: Number(row.id), provider: row.provider, eventId: row.event_id, resourceId: row.resource_id, receivedAt: dateOf(row.received_at_ms) }));
}
