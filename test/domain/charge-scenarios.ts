/**
 * Realistic Stripe charge histories, in TRUE order, and an independent reference model of what a
 * payment should end as. The reference is deliberately naive (a transition table written out from
 * the issue text, applied step by step in true order): the code under test must reach the same
 * state from any arrival order.
 */
import fc from 'fast-check';
import { chargeEvent } from '../support/stripe.ts';

export type StepKind = 'pending' | 'succeeded' | 'captured' | 'failed' | 'expired' | 'refund' | 'dispute_created' | 'dispute_won' | 'dispute_lost';

export interface Step {
  kind: StepKind;
  /** Seconds after the charge's first event; equal values are ties (gateways stamp whole seconds). */
  atSecond: number;
  /** Cumulative, for refunds. */
  amountRefunded?: number;
}

export interface Scenario {
  amount: number;
  steps: Step[];
}

export interface ReferenceState {
  status: string;
  amount: number | null;
  amountRefunded: number;
  lastEventSecond: number | null;
}

/** The transitions the issue lists, written out here rather than read from the code under test. */
export const issueTransitions: ReadonlySet<string> = new Set([
  'pending>paid',
  'pending>failed',
  'pending>canceled',
  'paid>refunded',
  'paid>partially_refunded',
  'paid>disputed',
  'partially_refunded>refunded',
  'partially_refunded>disputed',
  'disputed>paid',
  'disputed>charged_back',
]);

// A further partial refund is news too (the amount refunded grows), as the reference counts it.
const allowed = new Set([...issueTransitions, 'partially_refunded>partially_refunded']);

function meaning(step: Step, amount: number): { status: string; amountRefunded?: number; carriesAmount: boolean } {
  switch (step.kind) {
    case 'pending':
      return { status: 'pending', amountRefunded: 0, carriesAmount: true };
    case 'succeeded':
    case 'captured':
      return { status: 'paid', amountRefunded: 0, carriesAmount: true };
    case 'failed':
      return { status: 'failed', amountRefunded: 0, carriesAmount: true };
    case 'expired':
      return { status: 'canceled', amountRefunded: 0, carriesAmount: true };
    case 'refund':
      return { status: step.amountRefunded! >= amount ? 'refunded' : 'partially_refunded', amountRefunded: step.amountRefunded!, carriesAmount: true };
    case 'dispute_created':
      return { status: 'disputed', carriesAmount: false };
    case 'dispute_won':
      return { status: 'paid', carriesAmount: false };
    case 'dispute_lost':
      return { status: 'charged_back', carriesAmount: false };
  }
}

/** The payment after applying the steps one by one in true order (create mode). */
export function referenceOutcome(scenario: Scenario): ReferenceState {
  let state = null as ReferenceState | null;
  for (const step of scenario.steps) {
    const m = meaning(step, scenario.amount);
    if (state !== null) {
      if (!allowed.has(`${state.status}>${m.status}`)) continue;
      if (m.status === 'partially_refunded' && state.status === 'partially_refunded' && m.amountRefunded! <= state.amountRefunded) continue;
    }
    state = {
      status: m.status,
      amount: m.carriesAmount ? scenario.amount : (state?.amount ?? null),
      amountRefunded: m.amountRefunded ?? state?.amountRefunded ?? 0,
      lastEventSecond: step.atSecond,
    };
  }
  return state!;
}

const stripeType: Record<StepKind, string> = {
  pending: 'charge.pending',
  succeeded: 'charge.succeeded',
  captured: 'charge.captured',
  failed: 'charge.failed',
  expired: 'charge.expired',
  refund: 'charge.refunded',
  dispute_created: 'charge.dispute.created',
  dispute_won: 'charge.dispute.closed',
  dispute_lost: 'charge.dispute.closed',
};

export interface ScenarioEvent {
  eventId: string;
  type: string;
  chargeId: string;
  created: number;
  body: string;
}

/** The scenario as Stripe would send it: one event (with its own evt_ id) per step. */
export function stripeEvents(scenario: Scenario, chargeId: string, baseSeconds: number): ScenarioEvent[] {
  return scenario.steps.map((step, index) => {
    const eventId = `evt_${chargeId}_${index}`;
    const created = baseSeconds + step.atSecond;
    const type = stripeType[step.kind];
    const body = chargeEvent({
      id: eventId,
      type,
      chargeId,
      created,
      amount: scenario.amount,
      amountRefunded: step.kind === 'refund' ? step.amountRefunded : 0,
      disputeStatus: step.kind === 'dispute_won' ? 'won' : step.kind === 'dispute_lost' ? 'lost' : 'needs_response',
    });
    return { eventId, type, chargeId, created, body };
  });
}

// Gaps between consecutive true-order events: 0 makes a tie within one second. Charge events
// (pending, succeeded, captured, refunds) often share a second; a dispute is opened days after
// the payment and decided days after that, so dispute steps never tie with their predecessor.
const gap = fc.constantFrom(0, 0, 1, 2, 30, 3600);
const disputeGap = fc.constantFrom(86_400, 3 * 86_400, 30 * 86_400);
const isDisputeStep = (kind: StepKind) => kind === 'dispute_created' || kind === 'dispute_won' || kind === 'dispute_lost';

type Plan = Array<{ kind: StepKind; refundFraction?: number }>;

const refundsPlan: fc.Arbitrary<Plan> = fc
  .record({ partials: fc.uniqueArray(fc.integer({ min: 1, max: 9 }), { minLength: 0, maxLength: 3 }), full: fc.boolean() })
  .map(({ partials, full }) => [
    ...[...partials].sort((a, b) => a - b).map((tenths) => ({ kind: 'refund' as const, refundFraction: tenths / 10 })),
    ...(full || partials.length === 0 ? [{ kind: 'refund' as const, refundFraction: 1 }] : []),
  ]);

const disputePlan: fc.Arbitrary<Plan> = fc
  .record({
    partialFirst: fc.boolean(),
    closing: fc.constantFrom('none', 'won', 'lost'),
    refundAfterWin: fc.boolean(),
  })
  .map(({ partialFirst, closing, refundAfterWin }) => [
    ...(partialFirst ? [{ kind: 'refund' as const, refundFraction: 0.3 }] : []),
    { kind: 'dispute_created' as const },
    ...(closing === 'won' ? [{ kind: 'dispute_won' as const }] : closing === 'lost' ? [{ kind: 'dispute_lost' as const }] : []),
    ...(closing === 'won' && refundAfterWin ? [{ kind: 'refund' as const, refundFraction: 1 }] : []),
  ]);

const paidPlan: fc.Arbitrary<Plan> = fc
  .record({ captured: fc.boolean(), after: fc.oneof(fc.constant([] as Plan), refundsPlan, disputePlan) })
  .map(({ captured, after }) => [{ kind: 'succeeded' as const }, ...(captured ? [{ kind: 'captured' as const }] : []), ...after]);

const planArb: fc.Arbitrary<Plan> = fc
  .record({
    pending: fc.boolean(),
    rest: fc.oneof({ weight: 6, arbitrary: paidPlan }, { weight: 1, arbitrary: fc.constant([{ kind: 'failed' as const }]) }, { weight: 1, arbitrary: fc.constant([{ kind: 'expired' as const }]) }),
  })
  .map(({ pending, rest }) => [...(pending ? [{ kind: 'pending' as const }] : []), ...rest]);

export const scenarioArb: fc.Arbitrary<Scenario> = fc
  .record({ amount: fc.integer({ min: 100, max: 500_000 }), plan: planArb })
  .chain(({ amount, plan }) =>
    fc.tuple(fc.array(gap, { minLength: plan.length, maxLength: plan.length }), fc.array(disputeGap, { minLength: plan.length, maxLength: plan.length })).map(([gaps, disputeGaps]) => {
      let at = 0;
      const steps = plan.map((planned, index) => {
        if (index > 0) at += isDisputeStep(planned.kind) ? disputeGaps[index]! : gaps[index]!;
        const step: Step = { kind: planned.kind, atSecond: at };
        if (planned.refundFraction !== undefined) step.amountRefunded = Math.max(1, Math.round(amount * planned.refundFraction));
        return step;
      });
      return { amount, steps };
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
