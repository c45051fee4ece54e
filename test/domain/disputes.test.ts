import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { decidePaymentEvent, rejectedMoneyMovement } from '../../src/domain/payments/event-decision.ts';
import { type KnownFact, type PaymentState, foldPaymentFacts } from '../../src/domain/payments/fold.ts';
import type { InquiryChange, PaymentStatus } from '../../src/domain/payments/payment-fact.ts';
import { describeDecision } from '../../src/operations/decision-text.ts';

/**
 * Disputes as docs/disputes.md states them, on canonical facts (the gateways' own payloads are
 * tested where they are mapped): inquiries move no money, a won dispute returns to what the payment
 * was before it, a lost one keeps the refunds, chargebacks may come with no dispute, refunds may
 * come during one. Each in true order and in every arrival order, and resumed from a stored state.
 */

const T = Date.UTC(2026, 10, 1, 12, 0, 0);
const DAY = 86_400_000;
const AMOUNT = 1000;

interface FactSpec {
  status: PaymentStatus;
  at: number;
  refunded?: number;
  inquiry?: InquiryChange;
  snapshot?: boolean;
}

const known = (inboxId: number, { status, at, refunded, inquiry, snapshot }: FactSpec): KnownFact => ({
  inboxId,
  fact: {
    kind: `payment.${status}`,
    chargeId: 'ch_dispute',
    status,
    occurredAt: new Date(at),
    // Dispute and inquiry events carry no charge amount (a dispute's own amount may differ).
    ...(status === 'disputed' || status === 'charged_back' || inquiry ? {} : { amount: AMOUNT }),
    ...(refunded === undefined ? {} : { amountRefunded: refunded }),
    ...(inquiry ? { inquiry } : {}),
    ...(snapshot ? { snapshot: true as const } : {}),
  },
});

const paid = (at = T): FactSpec => ({ status: 'paid', at });
const refund = (at: number, refunded: number): FactSpec => ({ status: refunded >= AMOUNT ? 'refunded' : 'partially_refunded', at, refunded });
const disputed = (at: number): FactSpec => ({ status: 'disputed', at });
const won = (at: number): FactSpec => ({ status: 'paid', at });
const lost = (at: number): FactSpec => ({ status: 'charged_back', at });
const inquiry = (at: number, change: InquiryChange): FactSpec => ({ status: 'paid', at, inquiry: change });

const facts = (specs: FactSpec[]) => specs.map((spec, index) => known(index + 1, spec));
const fold = (specs: FactSpec[]) => foldPaymentFacts(null, facts(specs)).state!;
const view = (state: PaymentState) => ({ status: state.status, amountRefunded: state.amountRefunded, inquiryOpen: state.inquiryOpen });

/** Every arrival order of the facts gives the same payment (the fold sorts; this checks it does). */
function assertEveryOrder(specs: FactSpec[], expected: ReturnType<typeof view>) {
  fc.assert(
    fc.property(fc.shuffledSubarray(facts(specs), { minLength: specs.length, maxLength: specs.length }), (arrival) => {
      assert.deepEqual(view(foldPaymentFacts(null, arrival).state!), expected);
    }),
    { numRuns: 200 },
  );
}

/** The decision of the last fact, folded after the others (as fold-charges.ts asks it). */
function decideLast(specs: FactSpec[]) {
  const all = facts(specs);
  const event = all.at(-1)!;
  const before = foldPaymentFacts(null, all.slice(0, -1)).state;
  const result = foldPaymentFacts(null, all);
  return decidePaymentEvent({ event, before, after: result.state, fold: result });
}

describe('inquiries move no money', () => {
  test('an inquiry opens and closes beside the status: paid stays paid throughout', () => {
    const history = [paid(), inquiry(T + DAY, 'opened'), inquiry(T + 5 * DAY, 'closed')];
    assert.deepEqual(view(fold(history.slice(0, 2))), { status: 'paid', amountRefunded: 0, inquiryOpen: true });
    assert.deepEqual(view(fold(history)), { status: 'paid', amountRefunded: 0, inquiryOpen: false });
    assertEveryOrder(history, { status: 'paid', amountRefunded: 0, inquiryOpen: false });
  });

  test('opening is applied and says so; the same inquiry told again is stale, never a refused transition', () => {
    const opened = decideLast([paid(), inquiry(T + DAY, 'opened')]);
    assert.deepEqual(opened, { decision: 'applied', detail: { from: 'paid', to: 'paid', inquiry: 'opened' } });
    assert.equal(describeDecision(opened.decision, opened.detail), 'applied: paid → paid, inquiry opened');
    const again = decideLast([refund(T, 300), inquiry(T + DAY, 'opened'), inquiry(T + 2 * DAY, 'opened')]);
    assert.equal(again.decision, 'stale');
    assert.equal(rejectedMoneyMovement(again), undefined);
  });

  test('an inquiry on a partially refunded payment keeps its status and refund', () => {
    assertEveryOrder([paid(), refund(T + 1000, 300), inquiry(T + DAY, 'opened')], { status: 'partially_refunded', amountRefunded: 300, inquiryOpen: true });
  });

  test('an inquiry that escalates to a dispute is no longer open as an inquiry, and the dispute is won back to paid', () => {
    const history = [paid(), inquiry(T + DAY, 'opened'), disputed(T + 3 * DAY)];
    assertEveryOrder(history, { status: 'disputed', amountRefunded: 0, inquiryOpen: false });
    assertEveryOrder([...history, won(T + 40 * DAY)], { status: 'paid', amountRefunded: 0, inquiryOpen: false });
  });

  test('an inquiry known before its payment creates it paid, and the payment event fills in the amount', () => {
    const alone = fold([inquiry(T + DAY, 'opened')]);
    assert.deepEqual([alone.status, alone.amount, alone.inquiryOpen], ['paid', null, true]);
    const both = foldPaymentFacts(null, [known(1, inquiry(T + DAY, 'opened')), known(2, paid())]).state!;
    assert.deepEqual([both.status, both.amount, both.inquiryOpen], ['paid', AMOUNT, true]);
  });

  test('an inquiry stamped in the same second as the payment comes after it, so the payment keeps its amount', () => {
    for (const order of [
      [paid(T), inquiry(T, 'opened')],
      [inquiry(T, 'opened'), paid(T)],
    ]) {
      const state = fold(order);
      assert.deepEqual([state.status, state.amount, state.inquiryOpen], ['paid', AMOUNT, true]);
    }
    assertEveryOrder([paid(T), inquiry(T + DAY, 'opened'), inquiry(T + DAY, 'closed')], { status: 'paid', amountRefunded: 0, inquiryOpen: false });
  });

  test('a gateway read says whether an inquiry is open; one that cannot say keeps what the webhooks said', () => {
    const readOpen: FactSpec = { status: 'paid', at: T + 2 * DAY, inquiry: 'opened', snapshot: true };
    assert.equal(fold([paid(), readOpen]).inquiryOpen, true);
    const readClosed: FactSpec = { status: 'paid', at: T + 3 * DAY, inquiry: 'closed', snapshot: true };
    assert.equal(fold([paid(), inquiry(T + DAY, 'opened'), readClosed]).inquiryOpen, false);
    const silentRead: FactSpec = { status: 'paid', at: T + 3 * DAY, snapshot: true };
    assert.equal(fold([paid(), inquiry(T + DAY, 'opened'), silentRead]).inquiryOpen, true);
  });
});

describe('a dispute ends as it was decided', () => {
  test('won after a partial refund: partially refunded again, with its refund', () => {
    assertEveryOrder([paid(), refund(T + 1000, 200), disputed(T + DAY), won(T + 30 * DAY)], {
      status: 'partially_refunded',
      amountRefunded: 200,
      inquiryOpen: false,
    });
    const decision = decideLast([paid(), refund(T + 1000, 200), disputed(T + DAY), won(T + 30 * DAY)]);
    assert.deepEqual(decision, { decision: 'applied', detail: { from: 'disputed', to: 'partially_refunded' } });
  });

  test('lost after a partial refund: charged back, the refund kept', () => {
    assertEveryOrder([paid(), refund(T + 1000, 150), disputed(T + DAY), lost(T + 30 * DAY)], {
      status: 'charged_back',
      amountRefunded: 150,
      inquiryOpen: false,
    });
  });

  test('a dispute with no payment event known before it is won back to paid', () => {
    assertEveryOrder([disputed(T + DAY), won(T + 30 * DAY)], { status: 'paid', amountRefunded: 0, inquiryOpen: false });
  });
});

describe('chargebacks announced without a dispute', () => {
  test('are applied from paid and from partially refunded (the refund kept)', () => {
    assertEveryOrder([paid(), lost(T + 20 * DAY)], { status: 'charged_back', amountRefunded: 0, inquiryOpen: false });
    assertEveryOrder([paid(), refund(T + 1000, 400), lost(T + 20 * DAY)], { status: 'charged_back', amountRefunded: 400, inquiryOpen: false });
    const decision = decideLast([paid(), lost(T + 20 * DAY)]);
    assert.deepEqual(decision, { decision: 'applied', detail: { from: 'paid', to: 'charged_back' } });
  });

  test('what cannot happen is still refused: a chargeback of an authorization, a dispute of a fully refunded payment', () => {
    const held: FactSpec = { status: 'authorized', at: T };
    const ofHold = decideLast([held, lost(T + DAY)]);
    assert.deepEqual([ofHold.decision, rejectedMoneyMovement(ofHold)], ['rejected_transition', 'payment.charged_back']);
    const ofRefunded = decideLast([paid(), refund(T + 1000, AMOUNT), disputed(T + DAY)]);
    assert.deepEqual([ofRefunded.decision, rejectedMoneyMovement(ofRefunded)], ['rejected_transition', 'payment.disputed']);
    assert.deepEqual(view(fold([paid(), refund(T + 1000, AMOUNT), disputed(T + DAY)])), { status: 'refunded', amountRefunded: AMOUNT, inquiryOpen: false });
  });
});

describe('a refund during a dispute', () => {
  test('is recorded and the dispute stays open; a win then returns to the refund, a loss keeps it', () => {
    const open = [paid(), disputed(T + DAY), refund(T + 2 * DAY, 300)];
    assertEveryOrder(open, { status: 'disputed', amountRefunded: 300, inquiryOpen: false });
    assert.deepEqual(decideLast(open), { decision: 'applied', detail: { from: 'disputed', to: 'disputed' } });
    assertEveryOrder([...open, won(T + 30 * DAY)], { status: 'partially_refunded', amountRefunded: 300, inquiryOpen: false });
    assertEveryOrder([...open, lost(T + 30 * DAY)], { status: 'charged_back', amountRefunded: 300, inquiryOpen: false });
    assertEveryOrder([paid(), disputed(T + DAY), refund(T + 2 * DAY, AMOUNT), won(T + 30 * DAY)], {
      status: 'refunded',
      amountRefunded: AMOUNT,
      inquiryOpen: false,
    });
  });

  test('an older, smaller refund told late is stale, not a refusal', () => {
    const decision = decideLast([paid(), disputed(T + DAY), refund(T + 3 * DAY, 500), refund(T + 2 * DAY, 200)]);
    assert.equal(decision.decision, 'stale');
    assert.equal(fold([paid(), disputed(T + DAY), refund(T + 3 * DAY, 500), refund(T + 2 * DAY, 200)]).amountRefunded, 500);
  });
});

describe('a cancellation refused from a payment holding money', () => {
  test('counts as a refused money movement; one refused from a canceled or failed payment does not', () => {
    const ofPaid = decideLast([paid(), { status: 'canceled', at: T + DAY }]);
    assert.deepEqual([ofPaid.decision, rejectedMoneyMovement(ofPaid)], ['rejected_transition', 'payment.canceled']);
    const ofFailed = decideLast([
      { status: 'failed', at: T },
      { status: 'canceled', at: T + DAY },
    ]);
    assert.deepEqual([ofFailed.decision, rejectedMoneyMovement(ofFailed)], ['rejected_transition', undefined]);
  });
});

/**
 * A later fold may start from a stored state instead of every fact (a checkpoint): what it needs
 * to end a dispute or an inquiry right is in PaymentState, so resuming anywhere in a true-order
 * history ends where the fold over every fact ends.
 */
describe('resumed from a stored state', () => {
  const lifecycles: Record<string, FactSpec[]> = {
    'partial refund, dispute, won': [paid(), refund(T + 1000, 200), disputed(T + DAY), won(T + 30 * DAY)],
    'partial refund, dispute, lost': [paid(), refund(T + 1000, 150), disputed(T + DAY), lost(T + 30 * DAY)],
    'dispute, refund during it, won': [paid(), disputed(T + DAY), refund(T + 2 * DAY, 300), won(T + 30 * DAY)],
    'inquiry opened, closed': [paid(), refund(T + 1000, 100), inquiry(T + DAY, 'opened'), inquiry(T + 9 * DAY, 'closed')],
    'inquiry escalated, won': [paid(), inquiry(T + DAY, 'opened'), disputed(T + 3 * DAY), won(T + 40 * DAY)],
    'chargeback without dispute': [paid(), refund(T + 1000, 400), lost(T + 20 * DAY)],
  };
  for (const [name, history] of Object.entries(lifecycles)) {
    test(name, () => {
      const whole = fold(history);
      for (let split = 1; split < history.length; split += 1) {
        const all = facts(history);
        const checkpoint = foldPaymentFacts(null, all.slice(0, split)).state;
        assert.deepEqual(foldPaymentFacts(checkpoint, all.slice(split)).state, whole, `resumed after ${split} facts`);
      }
    });
  }
});
