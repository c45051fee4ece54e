import type { SqlExecutor } from '../../db/client.ts';
import type { EventDecisionName, InboxStatus } from '../../db/schema.ts';
import { ENQUEUEABLE_COLUMNS, type EnqueueableRow, type QueueableEvent, toQueueableEvent } from './event-columns.ts';
import type { SettledStatus } from '../../db/schema.ts';
import { type InboxRowRef, receivedWindowCondition } from './received-window.ts';

/**
 * Locks a batch's rows for the rest of its transaction, in id order (overlapping batches wait
 * instead of deadlocking), and returns their statuses now. A second job of the same event
 * (sweeper, replay, an expired attempt) waits here, then finds it no longer pending.
 */
export async function lockEventsForProcessing(tx: SqlExecutor, refs: readonly InboxRowRef[]): Promise<Map<number, InboxStatus>> {
  const window = receivedWindowCondition(refs, 2);
  const { rows } = await tx.executeSql<{ id: number; status: InboxStatus }>(
    `select id::float8 as id, status from webhook_inbox where id = any($1::bigint[])${window.sql} order by webhook_inbox.id for update`,
    [refs.map((ref) => ref.id), ...window.parameters],
  );
  return new Map(rows.map((row) => [row.id, row.status]));
}

/** Why an event ended as it did (webhook_inbox.decision, decision_detail): the handler's word, stored as given. */
export interface RecordedDecision {
  decision: EventDecisionName;
  detail: unknown;
}

export interface EventOutcome extends InboxRowRef {
  outcome: SettledStatus;
  /** What the event meant when processed (see webhook_inbox.fact); undefined leaves the column as it is. */
  fact?: unknown;
  /** Undefined: the row gets none (each processing decides afresh). */
  decision?: RecordedDecision;
}

/** Inside the batch's transaction: each row processed/ignored, with its attempt counted and its decision. One statement. */
export async function markEventOutcomes(tx: SqlExecutor, outcomes: readonly EventOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const values = JSON.stringify(
    outcomes.map(({ id, outcome, fact, decision }) => ({
      id,
      status: outcome,
      fact: fact ?? null,
      has_fact: fact !== undefined,
      decision: decision?.decision ?? null,
      decision_detail: decision?.detail ?? null,
    })),
  );
  const window = receivedWindowCondition(outcomes, 2, 'w.received_at');
  await tx.executeSql(
    `update webhook_inbox as w set
       status = v.status, attempts = w.attempts + 1, processed_at = now(), last_error = null,
       fact = case when v.has_fact then v.fact else w.fact end,
       decision = v.decision, decision_detail = v.decision_detail
     from jsonb_to_recordset($1::jsonb) as v(id bigint, status varchar, fact jsonb, has_fact boolean, decision text, decision_detail jsonb)
     where w.id = v.id${window.sql}`,
    [values, ...window.parameters],
  );
}

/**
 * The event waits for something outside it (the gateway API's circuit breaker): the row stays
 * pending with the reason in last_error, and the attempt is not counted, since nothing failed.
 */
export async function noteEventDeferred(db: SqlExecutor, id: number, reason: string): Promise<void> {
  await db.executeSql(`update webhook_inbox set last_error = $2 where id = $1 and status = 'pending'`, [id, reason]);
}

/**
 * After a rolled-back attempt, outside that transaction: the attempt still counts, with its error,
 * and with the decision the error stands for (a `require`-mode payment not created yet), or none.
 */
export async function recordFailedAttempt(db: SqlExecutor, id: number, error: string, decision?: RecordedDecision): Promise<void> {
  await db.executeSql(
    `update webhook_inbox set attempts = attempts + 1, last_error = $2, decision = $3::text, decision_detail = $4::jsonb where id = $1 and status = 'pending'`,
    [id, error, decision?.decision ?? null, decision ? JSON.stringify(decision.detail) : null],
  );
}

/**
 * Retries are exhausted: the row needs a human. The last recorded error is kept; pg-boss's own
 * (expiry, shutdown) fills in when the handler never got to record one. Idempotent.
 */
export async function markEventFailed(db: SqlExecutor, id: number, fallbackError: string): Promise<boolean> {
  const { rows } = await db.executeSql(
    `update webhook_inbox set status = 'failed', last_error = coalesce(last_error, $2) where id = $1 and status = 'pending' returning id`,
    [id, fallbackError],
  );
  return rows.length > 0;
}

/**
 * Back to `pending` with the error cleared and the recorded fact dropped (processing reads the
 * event afresh: its payload again, or a new gateway snapshot); the status is re-checked so a row
 * that changed since the candidates were read (another replay, a late worker) is left as it is.
 * Oldest first, as the candidates were.
 */
export async function resetEventsToPending(tx: SqlExecutor, ids: readonly number[], statuses: readonly InboxStatus[]): Promise<QueueableEvent[]> {
  const { rows } = await tx.executeSql<EnqueueableRow>(
    `update webhook_inbox set status = 'pending', last_error = null, fact = null, decision = null, decision_detail = null
     where id = any($1::bigint[]) and status = any($2::text[])
     returning ${ENQUEUEABLE_COLUMNS}`,
    [[...ids], [...statuses]],
  );
  return rows.map(toQueueableEvent).sort((a, b) => a.receivedAt.getTime() - b.receivedAt.getTime() || a.id - b.id);
}
