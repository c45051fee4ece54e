import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Stripe from 'stripe';
import type { StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { stripeDriver } from '../../../src/gateways/stripe/webhook-driver.ts';
import { fixtureDispute, fixtureEventBody } from '../../support/stripe-objects.ts';
import { createDriver, webhookRequest } from '../request.ts';

/**
 * Dispute events as Stripe publishes them: the dispute of stripe/openapi's fixtures (an inquiry:
 * `warning_needs_response`, `payment_method_details.card.case_type: inquiry`), with only its
 * status and ids set per case (docs/disputes.md says what each means for the payment).
 */
const driver = createDriver(stripeDriver, { secrets: ['whsec_unused'] });
const now = new Date('2026-01-01T00:00:00Z');
const created = 1_760_000_000;

function factOf(type: Stripe.Event.Type, status: Stripe.Dispute.Status) {
  const dispute = fixtureDispute({ id: 'dp_1Pgc71B7WZ01zgkWMevJiAUx', charge: 'ch_dispute', payment_intent: 'pi_dispute', status });
  const body = fixtureEventBody('evt_dispute', type, created, dispute);
  const stored: StoredEvent = { provider: 'stripe', ...driver.parse(webhookRequest(body), now), payloadLossy: false };
  return driver.toPaymentFact(stored);
}

const meaning = (type: Stripe.Event.Type, status: Stripe.Dispute.Status) => {
  const fact = factOf(type, status);
  return fact && { status: fact.status, inquiry: fact.inquiry };
};

describe('stripe: disputes and inquiries', () => {
  test("Stripe's own fixture dispute, an inquiry, opens an inquiry on the payment keyed by its PaymentIntent: no money moved", () => {
    const fact = factOf('charge.dispute.created', 'warning_needs_response');
    assert.deepEqual(
      [fact?.chargeId, fact?.legacyChargeId, fact?.status, fact?.inquiry, fact?.amount],
      ['pi_dispute', 'ch_dispute', 'paid', 'opened', undefined],
    );
    assert.deepEqual(meaning('charge.dispute.updated', 'warning_under_review'), { status: 'paid', inquiry: 'opened' });
  });

  test('charge.dispute.closed with warning_closed closes the inquiry (it used to map to nothing, leaving the payment disputed)', () => {
    assert.deepEqual(meaning('charge.dispute.closed', 'warning_closed'), { status: 'paid', inquiry: 'closed' });
    assert.deepEqual(meaning('charge.dispute.closed', 'prevented'), { status: 'paid', inquiry: 'closed' });
  });

  test('a dispute withdraws funds: created, or an inquiry escalated in place (updated / funds_withdrawn gone needs_response)', () => {
    for (const type of ['charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.funds_withdrawn'] as const) {
      assert.deepEqual(meaning(type, 'needs_response'), { status: 'disputed', inquiry: undefined }, type);
    }
    assert.deepEqual(meaning('charge.dispute.updated', 'under_review'), { status: 'disputed', inquiry: undefined });
  });

  test('won and lost are read from charge.dispute.closed; funds_reinstated beside it is no second decision', () => {
    assert.deepEqual(meaning('charge.dispute.closed', 'won'), { status: 'paid', inquiry: undefined });
    assert.deepEqual(meaning('charge.dispute.closed', 'lost'), { status: 'charged_back', inquiry: undefined });
    assert.equal(factOf('charge.dispute.funds_reinstated', 'won'), null);
    assert.equal(factOf('charge.dispute.updated', 'won'), null);
  });
});
