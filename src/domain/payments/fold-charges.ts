import type { SettledStatus } from '../../db/schema.ts';
import type { ChargeGroup, ChargeGroups, PaymentEvent } from './charge-groups.ts';
import { beforeCheckpoint, encodeCheckpoint, foldStart, isAfterStart, isHistoryLost } from './checkpoint.ts';
import { type EventDecision, decidePaymentEvent, hadEffect } from './event-decision.ts';
import { type KnownFact, type PaymentState, foldPaymentFacts, samePayment, sameState } from './fold.ts';
import type { LockedPayment, LockedPayments } from './lock-payments.ts';
import type { PaymentStatus } from './payment-fact.ts';
import type { PaymentChange } from './sql/payment-events.ts';
import { type PaymentCheckpoint, type PaymentTransition, type PaymentUpdate, chargeKeyOf } from './sql/payments.ts';
import type { PaymentRow } from './schema.ts';

/** A fact already known for one of the batch's charges, and the provider it came through. */
export interface ProviderFact {
  provider: string;
  known: KnownFact;
}

/** What applying one event did to its payment, and why (kept on its inbox row). */
export interface AppliedPaymentEvent {
  outcome: SettledStatus;
  decision: EventDecision;
}

/** A batch folded: what to write, in one statement each, and each event's outcome. */
export interface FoldedPayments {
  /** Per event, in the batch's order. */
  outcomes: AppliedPaymentEvent[];
  /** Payments whose history was lost before facts were kept: their row, kept as their checkpoint (checkpoint.ts). */
  checkpoints: PaymentCheckpoint[];
  /** The changed rows' last state and how many outbound events each gets. */
  updates: PaymentUpdate[];
  /** Status changes (payment_transitions). */
  transitions: PaymentTransition[];
  /** Changes of a payment's status, amounts or inquiry: the outbound events (payment_events). */
  changes: PaymentChange[];
}

/** The payment as its row has it. */
export function stateOf(row: PaymentRow): PaymentState {
  return {
    status: row.status,
    amount: row.amount,
    amountRefunded: row.amountRefunded,
    currency: row.currency,
    lastGatewayEventAt: row.lastGatewayEventAt,
    inquiryOpen: row.inquiryOpen,
    statusBeforeDispute: row.statusBeforeDispute,
    split: row.split,
  };
}

/**
 * Folds every charge of the batch in memory, its payment row locked and its known facts read
 * (`known`: every fact kept for the batch's keys, read once the rows were locked, so none
 * committed by another transaction in between is missed). Writes nothing: the caller writes what
 * it returns.
 */
export function foldCharges(charges: ChargeGroups, payments: LockedPayments, known: readonly ProviderFact[]): FoldedPayments {
  const byCharge = knownFactsByCharge(charges, payments, known);
  const folded: FoldedPayments = { outcomes: [], checkpoints: [], updates: [], transitions: [], changes: [] };
  for (const [id, group] of charges.byCharge) {
    const facts = byCharge.get(id)!;
    const payment = payments.get(id);
    const result = payment === undefined ? refuseCharge(group) : foldCharge(payment, group, facts);
    if (facts.historyLost) folded.checkpoints.push({ id: payment!.row.id, checkpoint: encodeCheckpoint(stateOf(payment!.row)) });
    for (const { index, applied } of result.outcomes) folded.outcomes[index] = applied;
    if (result.update) folded.updates.push(result.update);
    folded.transitions.push(...result.transitions);
    folded.changes.push(...result.changes);
  }
  return folded;
}

/** A charge's facts for the fold: those of events not in the batch, and whether its history was lost. */
interface KnownFacts {
  others: KnownFact[];
  historyLost: boolean;
}

/**
 * The known facts, by charge. A batch event's own earlier fact (a replay's) is left out: its new
 * processing is what replaces it. A payment that has no fact at all, its own earlier ones
 * included, yet was moved by the gateway before, lost its history before facts were kept (its
 * rows purged by an earlier version): it goes on from its row (checkpoint.ts).
 */
function knownFactsByCharge(charges: ChargeGroups, payments: LockedPayments, known: readonly ProviderFact[]): Map<string, KnownFacts> {
  const own = new Set([...charges.byCharge.values()].flatMap((group) => group.events.map(({ event }) => event.inboxId)));
  const byCharge = new Map<string, KnownFacts>([...charges.byCharge.keys()].map((id) => [id, { others: [], historyLost: false }]));
  const withFacts = new Set<string>();
  for (const { provider, known: fact } of known) {
    const id = charges.owners.get(chargeKeyOf({ provider, chargeId: fact.fact.chargeId }))?.owner;
    if (id === undefined) continue;
    withFacts.add(id);
    if (!own.has(fact.inboxId)) byCharge.get(id)!.others.push(fact);
  }
  for (const [id, charge] of byCharge) {
    const payment = payments.get(id);
    charge.historyLost = payment !== undefined && !payment.created && !withFacts.has(id) && isHistoryLost(payment.row);
  }
  return byCharge;
}

interface ChargeResult {
  outcomes: { index: number; applied: AppliedPaymentEvent }[];
  update?: PaymentUpdate;
  transitions: PaymentTransition[];
  changes: PaymentChange[];
}

/** A charge being folded, one event after the other. */
interface ChargeFold {
  row: PaymentRow;
  start: PaymentState | null;
  /** The payment as the events folded so far left it. */
  current: PaymentState;
  /** The row was inserted by this transaction and no event of it has been applied yet. */
  created: boolean;
  facts: KnownFact[];
  result: ChargeResult;
}

/**
 * One charge's events of the batch, one after the other, as if each had its own transaction:
 * each is folded with every fact known before it (fold.ts explains why a fold and not a patch),
 * and is `processed` when it changed the payment, `ignored` when it told nothing new (a gateway
 * read that finds the payment as it was, too). The row is written once, with the last state,
 * last_gateway_event_at included: later folds compare against it.
 */
function foldCharge(payment: LockedPayment, group: ChargeGroup, known: KnownFacts): ChargeResult {
  const { row } = payment;
  const require = group.events[0]!.event.unknownPayment === 'require';
  // From its checkpoint when its older facts were pruned, or from its row when its history was
  // lost before facts were kept (checkpoint.ts): the facts before either are in it.
  const start = known.historyLost ? stateOf(row) : foldStart(row, require);
  const charge: ChargeFold = {
    row,
    start,
    current: stateOf(row),
    created: payment.created,
    facts: known.others.filter((fact) => isAfterStart(start, fact)),
    result: { outcomes: [], transitions: [], changes: [] },
  };
  for (const { index, event } of group.events) foldEvent(charge, index, event);
  const { result, current } = charge;
  if (!sameState(stateOf(row), current) || result.changes.length > 0) {
    const initialStatus = require ? (row.initialStatus ?? row.status) : row.initialStatus;
    result.update = { id: row.id, state: current, initialStatus, events: result.changes.length, account: group.account };
  }
  return result;
}

/** The next event of a charge: folded with the facts before it, its decision, and what it changed. */
function foldEvent(charge: ChargeFold, index: number, event: PaymentEvent): void {
  const { row, start, result } = charge;
  const own: KnownFact = { inboxId: event.inboxId, fact: event.fact };
  if (start !== null && !isAfterStart(start, own)) {
    result.outcomes.push({ index, applied: { outcome: 'ignored', decision: beforeCheckpoint(own, start) } });
    return;
  }
  charge.facts = [...charge.facts, own];
  const fold = foldPaymentFacts(start, charge.facts);
  const folded = fold.state;
  const decision = decidePaymentEvent({ event: own, before: charge.created ? null : charge.current, after: folded, fold });
  if (folded === null) {
    // Refused before the event that created the row (rejected_amount): nothing to write yet.
    result.outcomes.push({ index, applied: { outcome: 'ignored', decision } });
    return;
  }
  const previousStatus = charge.created ? null : charge.current.status;
  if (charge.created || charge.current.status !== folded.status) {
    result.transitions.push({ paymentId: row.id, inboxId: event.inboxId, fromStatus: previousStatus, toStatus: folded.status });
  }
  // The application keeps the amounts too (its ledger, its billing): a further partial refund
  // that leaves the status where it was is a change it must hear of, not only a new status.
  // A fold that moved only last_gateway_event_at (a replay, a refold) is no news to it.
  if (charge.created || !samePayment(charge.current, folded)) {
    result.changes.push(outboundChange(row, row.eventSequence + result.changes.length + 1, previousStatus, folded, event));
  }
  result.outcomes.push({ index, applied: { outcome: hadEffect(decision) ? 'processed' : 'ignored', decision } });
  charge.created = false;
  charge.current = folded;
}

/** The outbox row one event's change of its payment becomes: event `sequence` of the payment. */
function outboundChange(row: PaymentRow, sequence: number, previousStatus: PaymentStatus | null, state: PaymentState, event: PaymentEvent): PaymentChange {
  return {
    paymentId: row.id,
    sequence,
    previousSequence: row.eventSequence,
    provider: row.provider,
    chargeId: row.gatewayChargeId,
    account: row.account ?? event.account,
    previousStatus,
    state,
    occurredAt: event.fact.occurredAt,
    cause: { inboxId: event.inboxId, ...event.cause },
  };
}

/** A charge no event could create a payment for: each event is refused (rejected_amount), nothing is written. */
function refuseCharge(group: ChargeGroup): ChargeResult {
  const outcomes = group.events.map(({ index, event }) => {
    const own: KnownFact = { inboxId: event.inboxId, fact: event.fact };
    const fold = foldPaymentFacts(null, [own]);
    return { index, applied: { outcome: 'ignored' as const, decision: decidePaymentEvent({ event: own, before: null, after: fold.state, fold }) } };
  });
  return { outcomes, transitions: [], changes: [] };
}
