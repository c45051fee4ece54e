/**
 * Realistic Stripe charge histories, in TRUE order, and an independent reference model of what a
 * payment should end as. The reference is deliberately naive (a transition table written out from
 * the issue text, applied step by step in true order): the code under test must reach the same
 * state from any arrival order.
 *
 * Histories include manual capture (an authorization, then its capture, its void or its lapse),
 * for PaymentIntent-backed payments a declined first charge followed by a second attempt, and
 * disputes as Stripe runs them (docs/disputes.md): inquiries that close or escalate (into a new
 * dispute, or in place: funds_withdrawn), refunds before, during and after a dispute.
 */
import fc from 'fast-check';
import { type ChargeEventOptions, chargeEvent } from '../support/stripe.ts';

export type StepKind =
  | 'pending'
  | 'succeeded'
  | 'authorized'
  | 'captured'
  | 'void'
  | 'failed'
  | 'expired'
  | 'refund'
  | 'inquiry_opened'
  | 'inquiry_closed'
  | 'dispute_created'
  /** An inquiry escalated in place: the same dispute gone needs_response (charge.dispute.funds_withdrawn). */
  | 'dispute_escalated'
  | 'dispute_won'
  | 'dispute_lost';

export interface Step {
  kind: StepKind;
  /** Seconds after the charge's first event; equal values are ties (gateways stamp whole seconds). */
  atSecond: number;
  /** Cumulative, for refunds. */
  amountRefunded?: number;
  /** Which charge of the PaymentIntent (0: the first attempt); always 0 without one. */
  attempt?: number;
}

export interface Scenario {
  amount: number;
  steps: Step[];
  /** The charges carry a PaymentIntent (the payment's key) instead of being keyed by their own id. */
  paymentIntent?: boolean;
}

export interface ReferenceState {
  status: string;
  amount: number | null;
  amountRefunded: number;
  lastEventSecond: number | null;
  inquiryOpen: boolean;
  /** While disputed: what the payment was before the dispute (a win returns to it). */
  beforeDispute?: string;
}

/** The transitions the issue lists, written out here rather than read from the code under test. */
export const issueTransitions: ReadonlySet<string> = new Set([
  'pending>authorized',
  'pending>paid',
  'pending>failed',
  'pending>canceled',
  // Authorization is not payment: captured → paid, voided or lapsed → canceled.
  'authorized>paid',
  'authorized>failed',
  'authorized>canceled',
  // A PaymentIntent's declined charge is followed by another attempt.
  'failed>authorized',
  'failed>paid',
  'paid>refunded',
  'paid>partially_refunded',
  'paid>disputed',
  // Chargebacks some gateways announce with no dispute before them (docs/disputes.md).
  'paid>charged_back',
  'partially_refunded>refunded',
  'partially_refunded>disputed',
  'partially_refunded>charged_back',
  // Won (back to what the payment was before the dispute), lost, or a refund while it is open.
  'disputed>paid',
  'disputed>charged_back',
  'disputed>partially_refunded',
  'disputed>refunded',
]);

// A further partial refund is news too (the amount refunded grows), as the reference counts it.
const allowed = new Set([...issueTransitions, 'partially_refunded>partially_refunded']);

interface Meaning {
  status: string;
  amountRefunded?: number;
  carriesAmount: boolean;
  /** An inquiry opened (true) or closed (false): it moves no money. */
  inquiry?: boolean;
}

function meaning(step: Step, amount: number): Meaning {
  switch (step.kind) {
    case 'pending':
      return { status: 'pending', amountRefunded: 0, carriesAmount: true };
    case 'succeeded':
    case 'captured':
      return { status: 'paid', amountRefunded: 0, carriesAmount: true };
    case 'authorized':
      return { status: 'authorized', amountRefunded: 0, carriesAmount: true };
    case 'failed':
      return { status: 'failed', amountRefunded: 0, carriesAmount: true };
    // Nothing was taken, so nothing was refunded (though Stripe marks the charge refunded).
    case 'expired':
    case 'void':
      return { status: 'canceled', amountRefunded: 0, carriesAmount: true };
    case 'refund':
      return { status: step.amountRefunded! >= amount ? 'refunded' : 'partially_refunded', amountRefunded: step.amountRefunded!, carriesAmount: true };
    case 'inquiry_opened':
      return { status: 'paid', carriesAmount: false, inquiry: true };
    case 'inquiry_closed':
      return { status: 'paid', carriesAmount: false, inquiry: false };
    case 'dispute_created':
    case 'dispute_escalated':
      return { status: 'disputed', carriesAmount: false };
    case 'dispute_won':
      return { status: 'paid', carriesAmount: false };
    case 'dispute_lost':
      return { status: 'charged_back', carriesAmount: false };
  }
}

/**
 * A dispute as the issue describes it: a win returns the payment to what it was before the dispute
 * (its refunds kept), a loss keeps the refunds, and a refund while the dispute is open is recorded
 * with the dispute still open. `null`: the step cannot apply.
 */
function disputedStep(state: ReferenceState, m: { status: string; amountRefunded?: number }): { status: string; beforeDispute?: string } | null {
  if (m.status === 'paid') return { status: state.beforeDispute! };
  if (m.status === 'charged_back') return { status: 'charged_back' };
  const before = state.beforeDispute!;
  if (!allowed.has(`${before}>${m.status}`)) return null;
  if (m.status === 'partially_refunded' && before === 'partially_refunded' && m.amountRefunded! <= state.amountRefunded) return null;
  return { status: 'disputed', beforeDispute: m.status };
}

function nextStatus(state: ReferenceState | null, m: { status: string; amountRefunded?: number }): { status: string; beforeDispute?: string } | null {
  if (state === null) return { status: m.status, ...(m.status === 'disputed' ? { beforeDispute: 'paid' } : {}) };
  if (!allowed.has(`${state.status}>${m.status}`)) return null;
  if (state.status === 'disputed') return disputedStep(state, m);
  if (m.status === 'partially_refunded' && state.status === 'partially_refunded' && m.amountRefunded! <= state.amountRefunded) return null;
  return { status: m.status, ...(m.status === 'disputed' ? { beforeDispute: state.status } : {}) };
}

/** An inquiry moves only its flag, and a flag already so is nothing new (null). */
function inquiryStep(state: ReferenceState | null, open: boolean, atSecond: number): ReferenceState | null {
  if (state === null) return { status: 'paid', amount: null, amountRefunded: 0, lastEventSecond: atSecond, inquiryOpen: open };
  return state.inquiryOpen === open ? null : { ...state, inquiryOpen: open, lastEventSecond: atSecond };
}

/** The payment after applying the steps one by one in true order (create mode). */
export function referenceOutcome(scenario: Scenario): ReferenceState {
  let state = null as ReferenceState | null;
  for (const step of scenario.steps) {
    const m = meaning(step, scenario.amount);
    if (m.inquiry !== undefined) {
      state = inquiryStep(state, m.inquiry, step.atSecond) ?? state;
      continue;
    }
    const next = nextStatus(state, m);
    if (next === null) continue;
    state = {
      ...next,
      amount: m.carriesAmount ? scenario.amount : (state?.amount ?? null),
      amountRefunded: m.amountRefunded ?? state?.amountRefunded ?? 0,
      lastEventSecond: step.atSecond,
      // A dispute or a chargeback is what an open inquiry became.
      inquiryOpen: m.status === 'disputed' || m.status === 'charged_back' ? false : (state?.inquiryOpen ?? false),
    };
  }
  return state!;
}

const stripeType: Record<StepKind, string> = {
  pending: 'charge.pending',
  succeeded: 'charge.succeeded',
  authorized: 'charge.succeeded',
  captured: 'charge.captured',
  void: 'charge.refunded',
  failed: 'charge.failed',
  expired: 'charge.expired',
  refund: 'charge.refunded',
  inquiry_opened: 'charge.dispute.created',
  inquiry_closed: 'charge.dispute.closed',
  dispute_created: 'charge.dispute.created',
  dispute_escalated: 'charge.dispute.funds_withdrawn',
  dispute_won: 'charge.dispute.closed',
  dispute_lost: 'charge.dispute.closed',
};

const disputeStatus: Partial<Record<StepKind, ChargeEventOptions['disputeStatus']>> = {
  inquiry_opened: 'warning_needs_response',
  inquiry_closed: 'warning_closed',
  dispute_won: 'won',
  dispute_lost: 'lost',
};

export interface ScenarioEvent {
  eventId: string;
  type: string;
  /** The payment's key (resource_id): the charge id, or the PaymentIntent id when there is one. */
  chargeId: string;
  created: number;
  body: string;
}

const uncaptured = new Set<StepKind>(['authorized', 'void', 'expired', 'failed']);

/**
 * The scenario as Stripe would send it: one event (with its own evt_ id) per step. `key` is the
 * payment's key: the charge's id, or in a PaymentIntent-backed scenario the PaymentIntent's, whose
 * charges are then `<key>_0`, `<key>_1` (one per attempt).
 */
export function stripeEvents(scenario: Scenario, key: string, baseSeconds: number): ScenarioEvent[] {
  return scenario.steps.map((step, index) => {
    const eventId = `evt_${key}_${index}`;
    const created = baseSeconds + step.atSecond;
    const type = stripeType[step.kind];
    // A voided or lapsed authorization is marked refunded in full by Stripe.
    const released = step.kind === 'void' || step.kind === 'expired';
    const body = chargeEvent({
      id: eventId,
      type,
      chargeId: scenario.paymentIntent ? `${key}_${step.attempt ?? 0}` : key,
      paymentIntent: scenario.paymentIntent ? key : undefined,
      created,
      amount: scenario.amount,
      amountRefunded: step.kind === 'refund' ? step.amountRefunded : released ? scenario.amount : 0,
      captured: !uncaptured.has(step.kind),
      disputeStatus: disputeStatus[step.kind] ?? 'needs_response',
    });
    return { eventId, type, chargeId: key, created, body };
  });
}

// Gaps between consecutive true-order events: 0 makes a tie within one second. Charge events
// (pending, succeeded, captured, refunds) often share a second; a dispute is opened days after
// the payment and decided days after that, so dispute steps never tie with their predecessor.
const gap = fc.constantFrom(0, 0, 1, 2, 30, 3600);
const disputeGap = fc.constantFrom(86_400, 3 * 86_400, 30 * 86_400);
const disputeSteps = new Set<StepKind>(['inquiry_opened', 'inquiry_closed', 'dispute_created', 'dispute_escalated', 'dispute_won', 'dispute_lost']);
const isDisputeStep = (kind: StepKind) => disputeSteps.has(kind);

type Plan = Array<{ kind: StepKind; refundFraction?: number; attempt?: number }>;

const refundsPlan: fc.Arbitrary<Plan> = fc
  .record({ partials: fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { minLength: 0, maxLength: 3 }), full: fc.boolean() })
  .map(({ partials, full }) => [
    ...[...partials].sort((a, b) => a - b).map((tenths) => ({ kind: 'refund' as const, refundFraction: tenths / 10 })),
    ...(full || partials.length === 0 ? [{ kind: 'refund' as const, refundFraction: 1 }] : []),
  ]);

// How a dispute opens: directly, or after an inquiry that escalates into a new dispute or in place;
// or an inquiry that closes without one (refunded while open, perhaps: Stripe allows it).
const disputeOpening: fc.Arbitrary<Plan> = fc.constantFrom<Plan>(
  [{ kind: 'dispute_created' }],
  [{ kind: 'inquiry_opened' }, { kind: 'dispute_created' }],
  [{ kind: 'inquiry_opened' }, { kind: 'dispute_escalated' }],
);

const inquiryPlan: fc.Arbitrary<Plan> = fc
  .record({ partialFirst: fc.boolean(), refundWhileOpen: fc.constantFrom(0, 0.5, 1), closed: fc.boolean() })
  .map(({ partialFirst, refundWhileOpen, closed }) => [
    ...(partialFirst ? [{ kind: 'refund' as const, refundFraction: 0.3 }] : []),
    { kind: 'inquiry_opened' as const },
    ...(refundWhileOpen > 0 ? [{ kind: 'refund' as const, refundFraction: refundWhileOpen }] : []),
    ...(closed ? [{ kind: 'inquiry_closed' as const }] : []),
  ]);

const disputePlan: fc.Arbitrary<Plan> = fc
  .record({
    partialFirst: fc.boolean(),
    opening: disputeOpening,
    refundDuring: fc.boolean(),
    closing: fc.constantFrom('none', 'won', 'lost'),
    refundAfterWin: fc.boolean(),
  })
  .map(({ partialFirst, opening, refundDuring, closing, refundAfterWin }) => [
    ...(partialFirst ? [{ kind: 'refund' as const, refundFraction: 0.3 }] : []),
    ...opening,
    ...(refundDuring ? [{ kind: 'refund' as const, refundFraction: 0.6 }] : []),
    ...(closing === 'won' ? [{ kind: 'dispute_won' as const }] : closing === 'lost' ? [{ kind: 'dispute_lost' as const }] : []),
    ...(closing === 'won' && refundAfterWin ? [{ kind: 'refund' as const, refundFraction: 1 }] : []),
  ]);

const afterPayment: fc.Arbitrary<Plan> = fc.oneof(fc.constant([] as Plan), refundsPlan, disputePlan, inquiryPlan);

const paidPlan: fc.Arbitrary<Plan> = fc
  .record({ captured: fc.boolean(), after: afterPayment })
  .map(({ captured, after }) => [{ kind: 'succeeded' as const }, ...(captured ? [{ kind: 'captured' as const }] : []), ...after]);

// Manual capture: charge.succeeded with captured: false, then the capture (and whatever follows a
// payment), a void (charge.refunded, still uncaptured) or the lapse of the hold (charge.expired).
const authorizedPlan: fc.Arbitrary<Plan> = fc.oneof(
  { weight: 3, arbitrary: afterPayment.map((after): Plan => [{ kind: 'authorized' }, { kind: 'captured' }, ...after]) },
  { weight: 1, arbitrary: fc.constant<Plan>([{ kind: 'authorized' }, { kind: 'expired' }]) },
  { weight: 1, arbitrary: fc.constant<Plan>([{ kind: 'authorized' }, { kind: 'void' }]) },
);

const settledPlan: fc.Arbitrary<Plan> = fc.oneof({ weight: 2, arbitrary: paidPlan }, { weight: 1, arbitrary: authorizedPlan });

const planArb = (paymentIntent: boolean): fc.Arbitrary<Plan> =>
  fc
    .record({
      pending: fc.boolean(),
      rest: fc.oneof(
        { weight: 9, arbitrary: settledPlan },
        { weight: 1, arbitrary: fc.constant<Plan>([{ kind: 'failed' }]) },
        { weight: 1, arbitrary: fc.constant<Plan>([{ kind: 'expired' }]) },
        // Only a PaymentIntent takes a second attempt after a declined charge.
        ...(paymentIntent
          ? [{ weight: 3, arbitrary: settledPlan.map((plan): Plan => [{ kind: 'failed' }, ...plan.map((step) => ({ ...step, attempt: 1 }))]) }]
          : []),
      ),
    })
    .map(({ pending, rest }) => [...(pending ? [{ kind: 'pending' as const }] : []), ...rest]);

export const scenarioArb: fc.Arbitrary<Scenario> = fc
  .boolean()
  .chain((paymentIntent) =>
    fc.record({ amount: fc.integer({ min: 100, max: 500_000 }), plan: planArb(paymentIntent), paymentIntent: fc.constant(paymentIntent) }),
  )
  .chain(({ amount, plan, paymentIntent }) =>
    fc
      .tuple(fc.array(gap, { minLength: plan.length, maxLength: plan.length }), fc.array(disputeGap, { minLength: plan.length, maxLength: plan.length }))
      .map(([gaps, disputeGaps]) => {
        let at = 0;
        const steps = plan.map((planned, index) => {
          if (index > 0) at += isDisputeStep(planned.kind) ? disputeGaps[index]! : gaps[index]!;
          const step: Step = { kind: planned.kind, atSecond: at };
          if (planned.refundFraction !== undefined) step.amountRefunded = Math.max(1, Math.round(amount * planned.refundFraction));
          if (planned.attempt !== undefined) step.attempt = planned.attempt;
          return step;
        });
        return { amount, steps, paymentIntent };
      }),
  );

/**
 * An arrival order: every event at least once, some delivered again, in any order (a stale event
 * after a newer one, paid before pending, …). Items are indexes into the scenario's steps.
 */
export function arrivalArb(count: number): fc.Arbitrary<number[]> {
  const indexes = Array.from({ length: count }, (_, i) => i);
  return fc
    .tuple(fc.shuffledSubarray(indexes, { minLength: count, maxLength: count }), fc.array(fc.tuple(fc.nat({ max: count - 1 }), fc.nat()), { maxLength: 3 }))
    .map(([order, duplicates]) => {
      const arrival = [...order];
      for (const [index, position] of duplicates) arrival.splice(position % (arrival.length + 1), 0, index);
      return arrival;
    });
}

export const scenarioWithArrivalArb = scenarioArb.chain((scenario) => arrivalArb(scenario.steps.length).map((arrival) => ({ scenario, arrival })));
