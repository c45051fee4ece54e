import { type Database, type Transaction, drizzleExecutor } from '../db/client.ts';
import type { SettledStatus } from '../db/schema.ts';
import type { EventDecision } from '../domain/payments/event-decision.ts';
import type { InboxEventRow } from '../inbox/sql/event-columns.ts';
import { type EventOutcome, lockEventsForProcessing, markEventOutcomes } from '../inbox/sql/mark-events.ts';
import { type AppliedEvent, type EventHandler, type PreparedEvent, notAPaymentEvent } from './handlers.ts';

/** An event routed and prepared, waiting for its batch's transaction. */
export interface ReadyEvent extends PreparedEvent {
  /** Its job's place in the fetched batch. */
  position: number;
  handler: EventHandler | undefined;
  row: InboxEventRow;
}

/** One event's result in its batch's transaction: `skipped` when it was no longer pending once locked. */
export type BatchOutcome = { outcome: 'skipped'; decision?: undefined } | { outcome: SettledStatus; decision: EventDecision | undefined };

export type Applied = BatchOutcome | { error: unknown };

/**
 * The batch in one transaction (applyBatch); if that fails, each event in its own, so one failure
 * stays one. `deps.db` may be an open transaction (a replay's dry run): each of these is then a
 * savepoint in it.
 */
export async function applyInBatchThenAlone(deps: { db: Database | Transaction }, ready: ReadyEvent[]): Promise<[ReadyEvent, Applied][]> {
  if (ready.length === 0) return [];
  try {
    const outcomes = await deps.db.transaction((tx) => applyBatch(tx, ready));
    return ready.map((item) => [item, outcomes.get(item.event.inboxId)!]);
  } catch (error) {
    if (ready.length === 1) return [[ready[0]!, { error }]];
  }
  const alone: [ReadyEvent, Applied][] = [];
  for (const item of ready) {
    try {
      const outcomes = await deps.db.transaction((tx) => applyBatch(tx, [item]));
      alone.push([item, outcomes.get(item.event.inboxId)!]);
    } catch (error) {
      alone.push([item, { error }]);
    }
  }
  return alone;
}

/**
 * Inside the batch's transaction, from its first statement to its COMMIT (which follows when this
 * returns): lock the inbox rows, keep those still pending (a second job of an event, a sweep or a
 * replay, waits on the lock and then finds it settled), let each handler apply its events (the
 * payments handler: applyPaymentBatch, payments-handler.ts), and mark each row processed or
 * ignored with its attempt counted, its fact and its decision. A throw rolls all of it back.
 */
async function applyBatch(tx: Transaction, ready: readonly ReadyEvent[]): Promise<Map<number, BatchOutcome>> {
  // One transaction, two views of it: the inbox's statements take the executor, handlers the drizzle transaction.
  const inbox = drizzleExecutor(tx);
  const statuses = await lockEventsForProcessing(
    inbox,
    ready.map((item) => ({ id: item.event.inboxId, receivedAt: item.row.receivedAt })),
  );
  const pending = ready.filter((item) => statuses.get(item.event.inboxId) === 'pending');
  const settled = await applyHandlers(tx, pending);
  await markEventOutcomes(inbox, settled);
  const outcomes = new Map<number, BatchOutcome>(ready.map((item) => [item.event.inboxId, { outcome: 'skipped' }]));
  for (const { id, outcome, decision } of settled) outcomes.set(id, { outcome, decision });
  return outcomes;
}

/** An event as its handler settled it, and its row. */
type SettledEvent = EventOutcome & AppliedEvent;

/** Each handler applies its events, in one call; an event no handler is registered for is `ignored`. */
async function applyHandlers(tx: Transaction, pending: readonly ReadyEvent[]): Promise<SettledEvent[]> {
  const byHandler = new Map<EventHandler | undefined, ReadyEvent[]>();
  for (const item of pending) {
    const items = byHandler.get(item.handler) ?? [];
    items.push(item);
    byHandler.set(item.handler, items);
  }
  const settled: SettledEvent[] = [];
  for (const [handler, items] of byHandler) {
    const applied = handler ? await handler.apply(tx, items) : items.map((item) => notAPaymentEvent(item.event.kind));
    if (applied.length !== items.length) throw new Error(`handler "${handler?.name}" returned ${applied.length} outcomes for ${items.length} events`);
    for (const [i, item] of items.entries()) settled.push({ id: item.event.inboxId, receivedAt: item.row.receivedAt, ...applied[i]! });
  }
  return settled;
}
