import { type Database, type Transaction, drizzleExecutor } from '../db/client.ts';
import type { InboxStatus, SettledStatus } from '../db/schema.ts';
import type { EventDecision } from '../domain/payments/event-decision.ts';
import type { PaymentStatus } from '../domain/payments/payment-fact.ts';
import { type ChargeKey, lockPayments } from '../domain/payments/sql/payments.ts';
import { describeError } from '../errors.ts';
import type { InboxEventRow } from '../inbox/sql/event-columns.ts';
import { findEventsByIds } from '../inbox/sql/find-events.ts';
import { resetEventsToPending } from '../inbox/sql/mark-events.ts';
import { type ReplayFilter, findReplayCandidates } from '../inbox/sql/pending-events.ts';
import { type EnqueueableEvent, singletonKeyFor } from '../queue/queues.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';
import type { ConfiguredProvider } from '../config/configured-providers.ts';
import { type Applied, type ReadyEvent, applyInBatchThenAlone } from './apply-batch.ts';
import { type HandlerRegistry, type InboxEvent, routeEvent } from './handlers.ts';
import { unknownPaymentDecision } from './process-batch.ts';
import { NoStoredSnapshotError, createStoredSnapshotRefetcher } from './stored-snapshots.ts';

export interface DryRunDeps {
  db: Database;
  providers: ReadonlyMap<string, ConfiguredProvider>;
  /** Whether the workers re-read a provider's charges from its gateway (the real refetcher's `has`). */
  refetches: Pick<ChargeRefetcher, 'has'>;
  /** The workers' handlers, built around the refetcher given (createBuiltInHandlers). */
  handlers(refetcher: ChargeRefetcher): HandlerRegistry;
}

/**
 * How a refetch-ordered event was predicted: the replay re-reads its charge from the gateway, which
 * a dry run never calls. `stored_snapshot`: the newest snapshot of that charge the inbox keeps;
 * `payload`: none is kept, so the event's own payload, as if ordered by occurred_at.
 */
export type RefetchStandIn = { from: 'stored_snapshot'; observedAt: Date } | { from: 'payload' };

export interface PredictedEvent {
  inboxId: number;
  eventId: string;
  eventType: string;
  /** Its status now. */
  status: InboxStatus;
  /** What the replay would leave it: `failed` = its attempt fails (`error`), and is retried; `skipped` = it changed since it was selected. */
  outcome: SettledStatus | 'failed' | 'skipped';
  error?: string;
  /** Why: what the workers would record on its row (webhook_inbox.decision, decision_detail). */
  decision?: EventDecision;
  /** The payment it is about, when it is a payment event. */
  payment?: ChargeKey;
  refetch?: RefetchStandIn;
}

export interface PredictedPayment {
  provider: string;
  chargeId: string;
  /** null: no such payment yet (the replay would create it). */
  now: PaymentStatus | null;
  after: PaymentStatus | null;
}

export interface ReplayPrediction {
  /** In the order the replay queues them (oldest first). */
  events: PredictedEvent[];
  /** Every payment those events are about, in id order. */
  payments: PredictedPayment[];
}

/** What the replay would do to the event, in words: the CLI's REPLAY column and the dashboard preview's. */
export function describePredictedOutcome(event: PredictedEvent): string {
  if (event.outcome === 'failed') return `fails: ${event.error ?? ''}`;
  if (event.outcome === 'skipped') return 'skipped (changed since it was selected)';
  return event.outcome;
}

/** Where a refetch-ordered event's prediction came from, in words; empty when it is not refetch-ordered. */
export function describeRefetchStandIn(event: PredictedEvent): string {
  if (!event.refetch) return '';
  return event.refetch.from === 'stored_snapshot' ? `snapshot of ${event.refetch.observedAt.toISOString()}` : 'payload';
}

/** Thrown to end the dry run's transaction: ROLLBACK, whatever it did. */
class DryRunRollback extends Error {}

interface Routed {
  row: InboxEventRow;
  ready?: ReadyEvent;
  refetch?: RefetchStandIn;
  error?: unknown;
}

/**
 * Routes and prepares one event at a time as a worker would, with the workers' handlers built
 * around the stand-in refetcher (stored-snapshots.ts: no gateway call). What the stand-in answered
 * while an event was prepared says how that event is predicted (RefetchStandIn); with no stored
 * snapshot the handler gets no context and reads the event's payload.
 */
function preparer(deps: DryRunDeps): (row: InboxEventRow, position: number) => Promise<Routed> {
  let refetch: RefetchStandIn | undefined;
  const standIn = createStoredSnapshotRefetcher(deps.refetches, deps.db);
  const handlers = deps.handlers({
    ...standIn,
    async fetchCharge(provider, chargeId, signal) {
      refetch = { from: 'payload' };
      const snapshot = await standIn.fetchCharge(provider, chargeId, signal);
      refetch = { from: 'stored_snapshot', observedAt: snapshot.observedAt };
      return snapshot;
    },
  });
  return async (row, position) => {
    refetch = undefined;
    try {
      const { event, handler } = routeEvent({ providers: deps.providers, handlers }, row);
      const context = await handler?.prepare?.(event, new AbortController().signal).catch((error: unknown) => {
        if (error instanceof NoStoredSnapshotError) return undefined;
        throw error;
      });
      return { row, refetch, ready: { position, row, event, context, handler } };
    } catch (error) {
      return { row, error };
    }
  };
}

/** The keys a payment event's payment may be stored under (its key, a legacy key, a thin notice's charge). */
function chargeKeysOf(event: InboxEvent): ChargeKey[] {
  const provider = event.stored.provider;
  if (event.fact) return [event.fact.chargeId, event.fact.legacyChargeId].flatMap((chargeId) => (chargeId === undefined ? [] : [{ provider, chargeId }]));
  const notice = event.provider.driver.toPaymentNotice?.(event.stored);
  return notice ? [{ provider, chargeId: notice }] : [];
}

/**
 * The replay's rounds: the queue's singleton policy runs one job per resource at a time, so a
 * resource's events are applied one after the other, each seeing the ones before it settled, in
 * the order they are queued (oldest first); events of different resources share a batch.
 */
function rounds(queued: readonly EnqueueableEvent[], ready: Map<number, ReadyEvent>): ReadyEvent[][] {
  const depth = new Map<string, number>();
  const result: ReadyEvent[][] = [];
  for (const event of queued) {
    const item = ready.get(event.id);
    if (!item) continue;
    const key = singletonKeyFor(event);
    const round = depth.get(key) ?? 0;
    depth.set(key, round + 1);
    (result[round] ??= []).push(item);
  }
  // A worker applies its batch in inbox id order (process-batch.ts).
  return result.map((round) => round.sort((a, b) => a.event.inboxId - b.event.inboxId));
}

async function paymentStatuses(tx: Transaction, keys: ChargeKey[]): Promise<PaymentStatuses> {
  const rows = await lockPayments(tx, keys);
  return new Map(rows.map((row) => [row.id, { key: { provider: row.provider, chargeId: row.gatewayChargeId }, status: row.status }]));
}

function outcomeOf(applied: Applied | undefined): Pick<PredictedEvent, 'outcome' | 'error' | 'decision'> {
  if (!applied) return { outcome: 'skipped' };
  if ('error' in applied) {
    // As the worker records it (process-batch.ts): a payment the application has not created yet.
    const decision = unknownPaymentDecision(applied.error);
    return { outcome: 'failed', error: describeError(applied.error), ...(decision ? { decision } : {}) };
  }
  return applied.decision ? { outcome: applied.outcome, decision: applied.decision } : { outcome: applied.outcome };
}

function predictedEvent(r: Routed, applied: Applied | undefined): PredictedEvent {
  const payment = r.ready ? chargeKeysOf(r.ready.event)[0] : undefined;
  return {
    inboxId: r.row.id,
    eventId: r.row.eventId,
    eventType: r.row.eventType,
    status: r.row.status,
    ...(r.error === undefined ? outcomeOf(applied) : { outcome: 'failed', error: describeError(r.error) }),
    ...(payment ? { payment } : {}),
    ...(r.refetch ? { refetch: r.refetch } : {}),
  };
}

type PaymentStatuses = Map<number, { key: ChargeKey; status: PaymentStatus }>;

/** Every payment read before or after (one the replay creates is only in `after`), in id order. */
function predictedPayments(before: PaymentStatuses, after: PaymentStatuses): PredictedPayment[] {
  const ids = [...new Set([...before.keys(), ...after.keys()])].sort((a, b) => a - b);
  return ids.map((id) => {
    const { key } = (after.get(id) ?? before.get(id))!;
    return { ...key, now: before.get(id)?.status ?? null, after: after.get(id)?.status ?? null };
  });
}

/**
 * A replay's dry run: the events the replay would select are put back to pending and applied by
 * the workers' own code (routing, the handlers' prepare and apply, the batch transaction with its
 * one-by-one fallback, each a savepoint here), in the order and grouping the queue gives them;
 * then the payments are read again, and the whole transaction is ROLLED BACK. Nothing it wrote
 * survives (inbox rows, payments, transitions, payment_events, delivery jobs inserted through the
 * same transaction), no processing job is queued, and no gateway is called (stored-snapshots.ts).
 * Sequences the inserts drew from (ids) are not rolled back: ids skip, as after any failed batch.
 * It holds the locks of those rows while it runs: the workers wait for those payments meanwhile.
 */
export async function dryRunReplay(deps: DryRunDeps, filter: ReplayFilter, statuses: readonly InboxStatus[]): Promise<ReplayPrediction> {
  let prediction: ReplayPrediction | undefined;
  const prepare = preparer(deps);
  try {
    await deps.db.transaction(async (tx) => {
      const inbox = drizzleExecutor(tx);
      const candidates = await findReplayCandidates(inbox, filter, statuses);
      const rows = await findEventsByIds(inbox, candidates);
      // One at a time: what the stand-in refetcher answered belongs to the event being prepared.
      const routed: Routed[] = [];
      for (const [position, candidate] of candidates.entries()) {
        const row = rows.get(candidate.id);
        if (row) routed.push(await prepare(row, position));
      }
      // As the replay does (its jobs are what the rounds stand for); inbox rows locked before payments, as the workers lock them.
      const queued = await resetEventsToPending(
        inbox,
        routed.map((r) => r.row.id),
        statuses,
      );
      const keys = routed.flatMap((r) => (r.ready ? chargeKeysOf(r.ready.event) : []));
      const before = await paymentStatuses(tx, keys);
      const ready = new Map(routed.flatMap((r) => (r.ready ? [[r.row.id, r.ready] as const] : [])));
      const applied = new Map<number, Applied>();
      for (const round of rounds(queued, ready)) {
        for (const [item, result] of await applyInBatchThenAlone({ db: tx }, round)) applied.set(item.event.inboxId, result);
      }
      const after = await paymentStatuses(tx, keys);
      const order = new Map(queued.map((event, i) => [event.id, i]));
      const events = routed
        .map((r) => predictedEvent(r, applied.get(r.row.id)))
        .sort((a, b) => (order.get(a.inboxId) ?? Infinity) - (order.get(b.inboxId) ?? Infinity));
      prediction = { events, payments: predictedPayments(before, after) };
      throw new DryRunRollback();
    });
  } catch (error) {
    if (!(error instanceof DryRunRollback)) throw error;
  }
  return prediction!;
}
