import type { SqlExecutor } from '../../db/client.ts';
import { type StoredEventRow, storedEventColumns } from './event-columns.ts';
import { SETTLED_STATUS_LIST } from './settled.ts';
import { dateOf, epochMs } from './statement.ts';

/**
 * The one-time carry-over of facts settled before payment_facts existed (drizzle/0018): its
 * progress is one row of payment_facts_carry_over, its work the inbox rows with ids up to
 * target_inbox_id, in id ranges, each range committed with the new progress.
 */

/**
 * An inbox row's facts are not in payment_facts yet: settled before the trigger existed, not yet
 * reached by the carry-over. Such rows stay where the fold reads them (processing/known-facts.ts) and
 * retention leaves them alone. Unqualified `id`: used on webhook_inbox and on its partitions.
 */
export const NOT_CARRIED_YET = `coalesce(id > (select c.carried_through_inbox_id from payment_facts_carry_over c)
  and id <= (select c.target_inbox_id from payment_facts_carry_over c), false)`;

export interface CarryOverProgress {
  targetInboxId: number;
  carriedThroughInboxId: number;
}

/** The progress, locked until the transaction ends (instances carry one range at a time); undefined: no carry-over. */
export async function lockCarryOverProgress(tx: SqlExecutor): Promise<CarryOverProgress | undefined> {
  const { rows } = await tx.executeSql<{ target: number; carried: number }>(
    'select target_inbox_id::float8 as target, carried_through_inbox_id::float8 as carried from payment_facts_carry_over for update',
  );
  return rows[0] && { targetInboxId: rows[0].target, carriedThroughInboxId: rows[0].carried };
}

/** A settled row of the range, with what it meant when settled (fact, decision) and when. */
export interface CarriedRow extends StoredEventRow {
  fact: unknown;
  decision: string | null;
  decision_detail: unknown;
  settled_at_ms: number;
}

/**
 * The settled rows with ids in (after, through], on each partition's primary key. The payload
 * only where no payment fact was recorded: it is then read through the driver.
 */
export async function selectRowsToCarry(tx: SqlExecutor, after: number, through: number): Promise<CarriedRow[]> {
  const { rows } = await tx.executeSql<CarriedRow>(
    `select ${storedEventColumns(`case when jsonb_typeof(fact->'chargeId') is distinct from 'string' then payload end`)},
       fact, decision, decision_detail, ${epochMs('coalesce(processed_at, received_at)')} as settled_at_ms
     from webhook_inbox
     where id > $1::bigint and id <= $2::bigint and (status in (${SETTLED_STATUS_LIST}) or processed_at is not null)`,
    [after, through],
  );
  return rows;
}

/** One fact to keep, as payment_facts holds it. */
export interface FactToKeep {
  provider: string;
  eventId: string;
  inboxId: number;
  eventType: string;
  paymentKey: string;
  legacyKey: string | null;
  occurredAt: Date;
  fact: unknown;
  decision: string | null;
  decisionDetail: unknown;
  recordedAt: Date;
}

/**
 * Inserts facts not kept yet. A fact already there was written by processing since the trigger
 * existed (a replay of an old row, say): it is the newer meaning and stays.
 */
export async function insertFactsIfAbsent(tx: SqlExecutor, facts: readonly FactToKeep[]): Promise<number> {
  if (facts.length === 0) return 0;
  const values = JSON.stringify(
    facts.map((f) => ({
      provider: f.provider,
      event_id: f.eventId,
      inbox_id: f.inboxId,
      event_type: f.eventType,
      payment_key: f.paymentKey,
      legacy_key: f.legacyKey,
      occurred_at: f.occurredAt.toISOString(),
      fact: f.fact,
      decision: f.decision,
      decision_detail: f.decisionDetail,
      recorded_at: f.recordedAt.toISOString(),
    })),
  );
  const { rows } = await tx.executeSql<{ inserted: number }>(
    `with inserted as (
       insert into payment_facts (provider, event_id, inbox_id, event_type, payment_key, legacy_key, occurred_at, fact, decision, decision_detail, recorded_at)
       select provider, event_id, inbox_id, event_type, payment_key, legacy_key, occurred_at, fact, decision, decision_detail, recorded_at
       from jsonb_to_recordset($1::jsonb) as v(provider varchar, event_id varchar, inbox_id bigint, event_type varchar, payment_key varchar,
         legacy_key varchar, occurred_at timestamptz, fact jsonb, decision text, decision_detail jsonb, recorded_at timestamptz)
       order by provider, event_id
       on conflict (provider, event_id) do nothing
       returning 1)
     select count(*)::int as inserted from inserted`,
    [values],
  );
  return rows[0]!.inserted;
}

/** The carry-over has reached `through` (finished once that is its target). */
export async function recordCarriedThrough(tx: SqlExecutor, through: number): Promise<void> {
  await tx.executeSql(
    `update payment_facts_carry_over set carried_through_inbox_id = $1::bigint,
       finished_at = case when $1::bigint >= target_inbox_id then now() end`,
    [through],
  );
}

export const settledAtOf = (row: CarriedRow): Date => dateOf(row.settled_at_ms);
