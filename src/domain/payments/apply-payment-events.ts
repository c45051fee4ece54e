import type { Transaction } from '../../db/client.ts';
import type { SettledStatus } from '../../db/schema.ts';
import { beforeCheckpoint, encodeCheckpoint, foldStart, isAfterStart, isHistoryLost } from './checkpoint.ts';
import { PaymentNotYetKnown } from './errors.ts';
import { type EventDecision, decidePaymentEvent, hadEffect } from './event-decision.ts';
import { type KnownFact, type PaymentState, applyFact, canApply, foldPaymentFacts, samePayment, sameState } from './fold.ts';
import type { PaymentFact, PaymentStatus } from './payment-fact.ts';
import { type PaymentChange, insertPaymentEvents } from './payment-events-sql.ts';
import {
  type ChargeKey,
  type PaymentCheckpoint,
  type PaymentTransition,
  type PaymentUpdate,
  chargeKeyOf,
  insertPaymentTransitions,
  insertPaymentsIfAbsent,
  lockPayments,
  updatePaymentStates,
  writeCheckpoints,
} from './payment-sql.ts';
import type { PaymentRow } from './schema.ts';

export type UnknownPaymentMode = 'create' | 'require';

export interface PaymentEvent {
  provider: string;
  unknownPayment: UnknownPaymentMode;
  inboxId: number;
  fact: PaymentFact;
  /** The gateway event it came from, named in the outbound event it may cause (payment_events). */
  cause: { eventId: string; eventType: string };
}

/** A fact already known for one of the batch's charges, and the provider it came through. */
export interface ProviderFact {
  provider: string;
  known: KnownFact;
}

/**
 * Every fact already known for the batch's charges (the batch's own events' earlier facts too:
 * a replay's). Called only once the payment rows are locked: read before the locks, it could miss
 * a fact another transaction committed in between, and the fold would then overwrite that
 * transaction's result.
 */
export type LoadKnownFacts = (tx: Transaction, charges: readonly ChargeKey[]) => Promise<ProviderFact[]>;

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
  };
}

/** The batch's events grouped by charge, in batch order within each charge. */
interface ChargeGroup {
  key: ChargeKey;
  /** Keys the payment may still be stored under (the events' legacyChargeId), each once. */
  legacyKeys: ChargeKey[];
  events: { index: number; event: PaymentEvent }[];
}

function groupByCharge(events: readonly PaymentEvent[]): Map<string, ChargeGroup> {
  const groups = new Map<string, ChargeGroup>();
  events.forEach((event, index) => {
    const key = { provider: event.provider, chargeId: event.fact.chargeId };
    const id = chargeKeyOf(key);
    const group = groups.get(id) ?? { key, legacyKeys: [], events: [] };
    const legacy = event.fact.legacyChargeId;
    if (legacy !== undefined && !group.legacyKeys.some((k) => k.chargeId === legacy)) group.legacyKeys.push({ provider: event.provider, chargeId: legacy });
    group.events.push({ index, event });
    groups.set(id, group);
  });
  return groups;
}

/** Every key a group's payment or facts may be stored under, mapped to the group's id. */
function keyOwners(groups: Map<string, ChargeGroup>): Map<string, { owner: string; key: ChargeKey }> {
  const owners = new Map<string, { owner: string; key: ChargeKey }>();
  for (const [id, group] of groups) owners.set(id, { owner: id, key: group.key });
  for (const [id, group] of groups) {
    for (const key of group.legacyKeys) if (!owners.has(chargeKeyOf(key))) owners.set(chargeKeyOf(key), { owner: id, key });
  }
  return owners;
}

interface LockedPayment {
  row: PaymentRow;
  /** Inserted by this transaction, from its first event's fact alone. */
  created: boolean;
}

/**
 * Lock first: most events find their payment already there, under its key or, stored before the
 * key changed, under a legacy key (such a row keeps its key: its outbound events go on under the
 * charge_id and sequence the application already knows). In `create` mode the missing rows are
 * inserted; a charge whose insert lost the race to a concurrent first event waited on the unique
 * index until the winner committed, and its row is then locked like the others.
 */
async function lockOrCreatePayments(tx: Transaction, groups: Map<string, ChargeGroup>): Promise<Map<string, LockedPayment>> {
  const owners = keyOwners(groups);
  const locked = new Map<string, LockedPayment>();
  const lock = async (keys: ChargeKey[]) => {
    const rows = new Map((await lockPayments(tx, keys)).map((row) => [chargeKeyOf({ provider: row.provider, chargeId: row.gatewayChargeId }), row]));
    // The key's own row first, a legacy one only when the key has none.
    for (const [id, row] of rows) if (owners.get(id)?.owner === id) locked.set(id, { row, created: false });
    for (const [id, row] of rows) {
      const owner = owners.get(id)?.owner;
      if (owner !== undefined && !locked.has(owner)) locked.set(owner, { row, created: false });
    }
  };
  await lock([...owners.values()].map(({ key }) => key));
  const missing = [...groups.entries()].filter(([id]) => !locked.has(id)).map(([, group]) => group);
  const required = missing.find((group) => group.events.some(({ event }) => event.unknownPayment === 'require'));
  if (required) throw new PaymentNotYetKnown(required.key.provider, required.key.chargeId);
  // A payment is created by the first of its events that alone makes a possible one; a charge with
  // none (each would refund more than its amount) gets no row, and its events are refused.
  const creatable = missing.flatMap((group) => {
    const first = group.events.find(({ event }) => canApply(null, event.fact));
    return first ? [{ group, state: applyFact(null, first.event.fact) }] : [];
  });
  const inserted = await insertPaymentsIfAbsent(tx, creatable.map(({ group, state }) => ({ ...group.key, state })));
  for (const row of inserted) locked.set(chargeKeyOf({ provider: row.provider, chargeId: row.gatewayChargeId }), { row, created: true });
  const raced = creatable.map(({ group }) => group).filter((group) => !locked.has(chargeKeyOf(group.key)));
  if (raced.length > 0) await lock(raced.map((group) => group.key));
  for (const group of raced) {
    if (!locked.has(chargeKeyOf(group.key))) throw new Error(`payment ${group.key.provider}/${group.key.chargeId} conflicted on insert but cannot be read`);
  }
  return locked;
}

/** What applying one event did to its payment, and why (kept on its inbox row). */
export interface AppliedPaymentEvent {
  outcome: SettledStatus;
  decision: EventDecision;
}

interface ChargeResult {
  outcomes: { index: number; applied: AppliedPaymentEvent }[];
  update?: PaymentUpdate;
  transitions: PaymentTransition[];
  changes: PaymentChange[];
}

/** The outbox row one event's change of its payment becomes: event `sequence` of the payment. */
function outboundChange(row: PaymentRow, sequence: number, previousStatus: PaymentStatus | null, state: PaymentState, event: PaymentEvent): PaymentChange {
  return {
    paymentId: row.id,
    sequence,
    previousSequence: row.eventSequence,
    provider: row.provider,
    chargeId: row.gatewayChargeId,
    previousStatus,
    state,
    occurredAt: event.fact.occurredAt,
    cause: { inboxId: event.inboxId, ...event.cause },
  };
}

/**
 * One charge's events of the batch, one after the other, as if each had its own transaction:
 * each is folded with every fact known before it (fold.ts explains why a fold and not a patch),
 * and is `processed` when it changed the payment, `ignored` when it told nothing new (a gateway
 * read that finds the payment as it was, too). The row is written once, with the last state,
 * last_gateway_event_at included: later folds compare against it.
 */
function foldCharge(payment: LockedPayment | undefined, group: ChargeGroup, known: KnownFacts): ChargeResult {
  if (payment === undefined) return refuseCharge(group);
  const { row } = payment;
  const require = group.events[0]!.event.unknownPayment === 'require';
  // From its checkpoint when its older facts were pruned, or from its row when its history was
  // lost before facts were kept (checkpoint.ts): the facts before either are in it.
  const start = known.historyLost ? stateOf(row) : foldStart(row, require);
  let current = stateOf(row);
  let created = payment.created;
  let facts = known.others.filter((fact) => isAfterStart(start, fact));
  const result: ChargeResult = { outcomes: [], transitions: [], changes: [] };
  for (const { index, event } of group.events) {
    const own: KnownFact = { inboxId: event.inboxId, fact: event.fact };
    if (start !== null && !isAfterStart(start, own)) {
      result.outcomes.push({ index, applied: { outcome: 'ignored', decision: beforeCheckpoint(own, start) } });
      continue;
    }
    facts = [...facts, own];
    const fold = foldPaymentFacts(start, facts);
    const folded = fold.state;
    const decision = decidePaymentEvent({ event: own, before: created ? null : current, after: folded, fold });
    if (folded === null) {
      // Refused before the event that created the row (rejected_amount): nothing to write yet.
      result.outcomes.push({ index, applied: { outcome: 'ignored', decision } });
      continue;
    }
    const previousStatus = created ? null : current.status;
    if (created || current.status !== folded.status) {
      result.transitions.push({ paymentId: row.id, inboxId: event.inboxId, fromStatus: previousStatus, toStatus: folded.status });
    }
    // The application keeps the amounts too (its ledger, its billing): a further partial refund
    // that leaves the status where it was is a change it must hear of, not only a new status.
    // A fold that moved only last_gateway_event_at (a replay, a refold) is no news to it.
    if (created || !samePayment(current, folded)) {
      result.changes.push(outboundChange(row, row.eventSequence + result.changes.length + 1, previousStatus, folded, event));
    }
    result.outcomes.push({ index, applied: { outcome: hadEffect(decision) ? 'processed' : 'ignored', decision } });
    created = false;
    current = folded;
  }
  if (!sameState(stateOf(row), current) || result.changes.length > 0) {
    result.update = { id: row.id, state: current, initialStatus: require ? (row.initialStatus ?? row.status) : row.initialStatus, events: result.changes.length };
  }
  return result;
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

/**
 * Applies a batch of events' facts to their payments inside the caller's transaction, with a
 * handful of statements whatever the batch size: lock (or create) every payment row, read every
 * known fact of those charges, fold each charge in memory, then write the changed rows, the
 * status changes (payment_transitions) and an outbound event (payment_events) per change of a
 * payment's status or amounts. Returns, per
 * event in the order given, its outcome and the decision behind it (a dry run reads them too).
 */
export async function applyPaymentEvents(
  tx: Transaction,
  events: readonly PaymentEvent[],
  loadKnownFacts: LoadKnownFacts,
  /** Told the changes inside the same transaction, after their payment_events rows (the push side queues its deliveries). */
  onChanges?: (changes: readonly PaymentChange[]) => Promise<void>,
): Promise<AppliedPaymentEvent[]> {
  if (events.length === 0) return [];
  const groups = groupByCharge(events);
  const payments = await lockOrCreatePayments(tx, groups);
  const known = await knownFactsByCharge(tx, groups, events, payments, loadKnownFacts);
  const outcomes: AppliedPaymentEvent[] = new Array(events.length);
  const updates: PaymentUpdate[] = [];
  const transitions: PaymentTransition[] = [];
  const changes: PaymentChange[] = [];
  const lostHistories: PaymentCheckpoint[] = [];
  for (const [id, group] of groups) {
    const charge = known.get(id) ?? { others: [], historyLost: false };
    const result = foldCharge(payments.get(id), group, charge);
    if (charge.historyLost) lostHistories.push({ id: payments.get(id)!.row.id, checkpoint: encodeCheckpoint(stateOf(payments.get(id)!.row)) });
    for (const { index, applied } of result.outcomes) outcomes[index] = applied;
    if (result.update) updates.push(result.update);
    transitions.push(...result.transitions);
    changes.push(...result.changes);
  }
  await writeCheckpoints(tx, lostHistories);
  await updatePaymentStates(tx, updates);
  await insertPaymentTransitions(tx, transitions);
  await insertPaymentEvents(tx, changes);
  if (changes.length > 0) await onChanges?.(changes);
  return outcomes;
}

/** A charge's facts for the fold: those of events not in the batch, and whether its history was lost. */
interface KnownFacts {
  others: KnownFact[];
  historyLost: boolean;
}

/**
 * The known facts of the batch's charges, by charge. A batch event's own earlier fact (a replay's)
 * is left out: its new processing is what replaces it. A payment that has no fact at all,
 * its own earlier ones included, yet was moved by the gateway before, lost its history before
 * facts were kept (its rows purged by an earlier version): it goes on from its row (checkpoint.ts).
 */
async function knownFactsByCharge(
  tx: Transaction,
  groups: Map<string, ChargeGroup>,
  events: readonly PaymentEvent[],
  payments: Map<string, LockedPayment>,
  loadKnownFacts: LoadKnownFacts,
): Promise<Map<string, KnownFacts>> {
  const owners = keyOwners(groups);
  const own = new Set(events.map((event) => event.inboxId));
  const known = new Map<string, KnownFacts>([...groups.keys()].map((id) => [id, { others: [], historyLost: false }]));
  const withFacts = new Set<string>();
  for (const { provider, known: fact } of await loadKnownFacts(tx, [...owners.values()].map(({ key }) => key))) {
    const id = owners.get(chargeKeyOf({ provider, chargeId: fact.fact.chargeId }))?.owner;
    if (id === undefined) continue;
    withFacts.add(id);
    if (!own.has(fact.inboxId)) known.get(id)!.others.push(fact);
  }
  for (const [id, charge] of known) {
    const payment = payments.get(id);
    charge.historyLost = payment !== undefined && !payment.created && !withFacts.has(id) && isHistoryLost(payment.row);
  }
  return known;
}
