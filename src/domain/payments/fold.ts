import { disputeAllows, disputeStep } from './disputes.ts';
import { type PaymentFact, type PaymentStatus, type SplitShare, sameSplit } from './payment-fact.ts';
import { canTransitionTo, lifecycleRank } from './state-machine.ts';

/**
 * Arrival-order independence, the property this module exists for.
 *
 * Gateways deliver a charge's events in any order, more than once. Guards applied per event (the
 * state machine plus "older than last_gateway_event_at → ignored") are not enough: with
 * paid(t2) applied, a dispute.closed/lost(t5) arriving next is an invalid paid → charged_back and
 * is ignored; dispute.created(t4) arriving last is then either "older" (ignored) or a valid
 * paid → disputed, and the payment ends `disputed`, while the true order ends `charged_back`.
 *
 * So a payment's state is never patched by one event. It is recomputed, under the payment row
 * lock, as a fold over every fact known for the charge, sorted by occurred_at and run through the
 * state machine from the initial state. Whatever the arrival order, once the same facts are known
 * the fold gives the same answer: the answer of the true order. A late or duplicate event changes
 * nothing and is recorded `ignored`; an old event that completes the history changes the result
 * and is `processed`.
 *
 * Gateways stamp whole seconds, so facts often share an occurred_at (charge.pending and
 * charge.succeeded in one second). Within such a tie the order is unknowable, so the fold picks,
 * repeatedly, the fact that may apply next and is earliest in the lifecycle (then: least refunded,
 * then lowest inbox id, only to be deterministic), never returning within the tie to a status it
 * started from or already reached. Valid transitions win over invalid ones, and a tied chain
 * pending → paid → refunded is applied whole instead of blocking itself.
 *
 * A snapshot (a refetch's read of the gateway API) is not a transition: it resets the state to
 * what the gateway said, whatever came before, and the facts after it apply through the state
 * machine again. It takes its place at the START of the second it was read in: webhook times are
 * whole seconds, so a fact stamped in that second may have happened after the read; applied after
 * the reset it is either already reflected (the state machine then refuses it: no harm) or news.
 *
 * Disputes and inquiries (disputes.ts, docs/disputes.md) need more than the status to fold: what a
 * won dispute returns to, and whether an inquiry is open. Both are part of PaymentState, so a fold
 * resumed from a stored state continues exactly as the fold over every fact would.
 *
 * Where the facts come from, and how long (docs/payment-history.md): every settled event's fact is
 * kept in payment_facts, whatever happens to its payload, for as long as its payment is active.
 * Past that (quiet for the provider's keyRetentionDays) the facts are pruned and the state they
 * fold to is kept on the payment row as its checkpoint. A fold then starts from the checkpoint
 * instead of the initial state, with the facts after the checkpoint's time only: a fact from
 * before it is part of what the checkpoint sums up, or history it can no longer place, and
 * changes nothing (checkpoint.ts). A payment whose facts an earlier version purged with its
 * payloads goes on from its row the same way. So a late event is folded onto the payment's known
 * history, never onto nothing.
 */

export interface PaymentState {
  status: PaymentStatus;
  /** Minor units. */
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  /** occurred_at of the newest fact the fold applied (null: none yet, e.g. an app-created row). */
  lastGatewayEventAt: Date | null;
  /** An inquiry is open (no money moved; the status is unchanged by it). */
  inquiryOpen: boolean;
  /** While `disputed`: the status a won dispute returns to (paid, partially_refunded, refunded); null otherwise. */
  statusBeforeDispute: PaymentStatus | null;
  /**
   * How the charge is divided between recipients (Pagar.me), the newest the facts said; null when
   * none did. Part of the state, so a checkpoint keeps it when the facts that said it are pruned.
   */
  split: readonly SplitShare[] | null;
}

/** An inquiry's webhook: it moves only the inquiry flag (a gateway read saying one is a snapshot, which resets). */
const isInquiry = (fact: PaymentFact) => fact.inquiry !== undefined && !fact.snapshot;

/** A fact and the inbox row it came from (the id only breaks otherwise exact ties). */
export interface KnownFact {
  inboxId: number;
  fact: PaymentFact;
}

function refundedAmount(fact: PaymentFact, amount: number | null): number | undefined {
  if (fact.amountRefunded !== undefined) return fact.amountRefunded;
  return fact.status === 'refunded' && amount !== null ? amount : undefined;
}

/**
 * A status transition the state machine allows, or a further partial refund (same status, more
 * refunded: the amount is the news); inquiries and refunds during a dispute by the dispute rules.
 */
function transitionAllowed(state: PaymentState | null, fact: PaymentFact): boolean {
  if (state === null) return true;
  const byDispute = disputeAllows(state, fact, refundedAmount(fact, fact.amount ?? state.amount));
  if (byDispute !== undefined) return byDispute;
  if (canTransitionTo(state.status, fact.status)) return true;
  return state.status === 'partially_refunded' && fact.status === 'partially_refunded' && (refundedAmount(fact, state.amount) ?? 0) > state.amountRefunded;
}

/**
 * More refunded than the payment's amount: no money movement leads there (refunds whose amounts add
 * up past the charge, a payload with a bigger refunded figure, an amount that shrank under earlier
 * refunds). Such a fact is refused rather than capped: a capped amount would be a number no gateway
 * said, and the refusal is what tells an operator to look at the charge at the gateway.
 */
function impossibleAmounts(state: PaymentState): boolean {
  return state.amount !== null && state.amountRefunded > state.amount;
}

/** A fact that may apply next: an allowed transition that leaves a possible payment. */
export function canApply(state: PaymentState | null, fact: PaymentFact): boolean {
  return transitionAllowed(state, fact) && !impossibleAmounts(applyFact(state, fact));
}

/** The state after one fact, in `create` mode from nothing (the first fact creates the payment). */
export function applyFact(state: PaymentState | null, fact: PaymentFact): PaymentState {
  const amount = fact.amount ?? state?.amount ?? null;
  const amountRefunded = refundedAmount(fact, amount) ?? state?.amountRefunded ?? 0;
  return {
    ...disputeStep(state, fact, amount, amountRefunded),
    amount,
    amountRefunded,
    currency: fact.currency ?? state?.currency ?? null,
    lastGatewayEventAt: fact.occurredAt,
    split: fact.split ?? state?.split ?? null,
  };
}

/** Where a fact sits in time: a snapshot at the start of its second (see the module comment). */
function foldTime(fact: PaymentFact): number {
  const time = fact.occurredAt.getTime();
  return fact.snapshot ? time - (((time % 1000) + 1000) % 1000) : time;
}

/**
 * Within a tie an inquiry comes after the payment facts of its rank (it carries no amount: first,
 * it would create an amount-less payment the charge.succeeded beside it could no longer fill in),
 * and an inquiry opened before one closed.
 */
const inquiryRank = (fact: PaymentFact) => (!isInquiry(fact) ? 0 : fact.inquiry === 'opened' ? 1 : 2);

function tieOrder(a: KnownFact, b: KnownFact): number {
  return (
    lifecycleRank[a.fact.status] - lifecycleRank[b.fact.status] ||
    inquiryRank(a.fact) - inquiryRank(b.fact) ||
    (a.fact.amountRefunded ?? 0) - (b.fact.amountRefunded ?? 0) ||
    a.inboxId - b.inboxId
  );
}

/**
 * Within one second the lifecycle never comes back to a status it was in or reached: a second
 * `paid` in the tie (charge.captured beside charge.succeeded, beside a dispute) is the same news,
 * not a won dispute. Disputes are opened and decided days apart, so a dispute won in the very
 * second it was opened is the one history this reads wrongly (it stays `disputed`: the cautious
 * side). Further partial refunds are the exception: their amounts order them.
 */
function revisits(reachedInTie: ReadonlySet<PaymentStatus>, fact: PaymentFact): boolean {
  // An inquiry moves no status, so it revisits none.
  if (isInquiry(fact)) return false;
  return fact.status !== 'partially_refunded' && reachedInTie.has(fact.status);
}

/** A fact the fold refused where it reached it: what the payment was then, and why. */
export type Refusal = {
  /** The last fact applied before the refusal (a snapshot there means the gateway's read decided). */
  after: KnownFact | undefined;
} /** The state machine refused it from `from` (`to` is the fact's own status). */ & (
  | { reason: 'transition'; from: PaymentStatus }
  /** It would leave `amountRefunded` above `amount` (event-decision.ts: rejected_amount). */
  | { reason: 'amounts'; amount: number; amountRefunded: number }
);

/** Why a fact the fold could not apply was refused. With no state yet, only its amounts can refuse it. */
function refusalOf(state: PaymentState | null, fact: PaymentFact, after: KnownFact | undefined): Refusal {
  const next = applyFact(state, fact);
  // The state machine speaks first: an amount check of a transition that cannot happen says less.
  if (state === null || (transitionAllowed(state, fact) && impossibleAmounts(next))) {
    return { reason: 'amounts', amount: next.amount ?? 0, amountRefunded: next.amountRefunded, after };
  }
  return { reason: 'transition', from: state.status, after };
}

export interface FoldResult {
  /** null only when there is no initial state and no fact that could create the payment. */
  state: PaymentState | null;
  /** The facts that changed the state, in the order the fold applied them. */
  applied: KnownFact[];
  /** The facts the fold could not apply where they fell in time (event-decision.ts names them). */
  refused: Map<KnownFact, Refusal>;
}

/** Pure: the payment state the known facts lead to from `initial` (null: `create` mode, nothing yet). */
export function foldPaymentFacts(initial: PaymentState | null, facts: readonly KnownFact[]): FoldResult {
  const sorted = [...facts].sort((a, b) => foldTime(a.fact) - foldTime(b.fact) || tieOrder(a, b));
  let state = initial;
  const applied: KnownFact[] = [];
  const refused = new Map<KnownFact, Refusal>();
  for (let start = 0; start < sorted.length; ) {
    const time = foldTime(sorted[start]!.fact);
    let end = start;
    while (end < sorted.length && foldTime(sorted[end]!.fact) === time) end += 1;
    const tied = sorted.slice(start, end).filter((known) => !known.fact.snapshot);
    // Snapshots of the same second: the latest read wins; the webhooks of that second follow it.
    // A read is the gateway's truth, but not when it is an impossible payment: that one is refused.
    const [latest] = latestReadFirst(sorted.slice(start, end));
    if (latest && impossibleAmounts(applyFact(state, latest.fact))) refused.set(latest, refusalOf(state, latest.fact, applied.at(-1)));
    else if (latest) {
      state = applyFact(state, latest.fact);
      applied.push(latest);
    }
    const reachedInTie = new Set<PaymentStatus>(state ? [state.status] : []);
    for (;;) {
      const next = tied.findIndex((known) => canApply(state, known.fact) && !revisits(reachedInTie, known.fact));
      if (next < 0) break;
      const [known] = tied.splice(next, 1);
      state = applyFact(state, known!.fact);
      // What the fact said and where it left the payment (a won dispute says paid, and may return
      // to partially refunded): neither comes back within the tie. An inquiry says no status.
      if (!isInquiry(known!.fact)) reachedInTie.add(known!.fact.status);
      reachedInTie.add(state.status);
      applied.push(known!);
    }
    // A tie's leftovers cannot apply (with no state yet, only for their amounts).
    for (const known of tied) refused.set(known, refusalOf(state, known.fact, applied.at(-1)));
    start = end;
  }
  return { state, applied, refused };
}

function latestReadFirst(known: readonly KnownFact[]): KnownFact[] {
  return known.filter((k) => k.fact.snapshot).sort((a, b) => b.fact.occurredAt.getTime() - a.fact.occurredAt.getTime() || b.inboxId - a.inboxId);
}

/**
 * The payment as its owner sees it: status, amounts, an open inquiry and whose money it is (the
 * split), not when the fold last heard of it.
 */
export function samePayment(a: PaymentState, b: PaymentState): boolean {
  return (
    a.status === b.status &&
    a.amount === b.amount &&
    a.amountRefunded === b.amountRefunded &&
    a.currency === b.currency &&
    a.inquiryOpen === b.inquiryOpen &&
    sameSplit(a.split, b.split)
  );
}

export function sameState(a: PaymentState, b: PaymentState): boolean {
  return (
    samePayment(a, b) &&
    a.statusBeforeDispute === b.statusBeforeDispute &&
    (a.lastGatewayEventAt?.getTime() ?? null) === (b.lastGatewayEventAt?.getTime() ?? null)
  );
}
