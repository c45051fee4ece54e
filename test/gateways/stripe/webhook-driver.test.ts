import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Stripe from 'stripe';
import type { SecretSignatureProof } from '../../../src/gateways/shared/proof.ts';
import type { StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { stripeDriver } from '../../../src/gateways/stripe/webhook-driver.ts';
import { fixtureCharge, fixtureDispute, fixtureEventBody } from '../../support/stripe-objects.ts';
import { createDriver, verifyOutcome, webhookRequest } from '../request.ts';

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

describe('stripe: signatures as the official SDK makes them', () => {
  // Signed by the `stripe` package (generateTestHeaderString), never by the code under test.
  const sdk = new Stripe('sk_test_not_used_for_network');
  const secret = 'whsec_stripe_driver_test';
  const body = fixtureEventBody('evt_signed', 'charge.succeeded', created, fixtureCharge({ id: 'ch_signed', amount: 2000, currency: 'brl' }));
  const signedAt = Math.floor(now.getTime() / 1000);
  const signed = (payload: string, withSecret: string, timestamp = signedAt) =>
    webhookRequest(payload, { 'Stripe-Signature': sdk.webhooks.generateTestHeaderString({ payload, secret: withSecret, timestamp }) });
  const verifier = createDriver(stripeDriver, { secrets: [secret] });

  test('the SDK-signed body verifies, and names the secret that matched', async () => {
    assert.equal(await verifyOutcome(verifier, signed(body, secret), now), 'ok');
    const proof = (await verifier.verify(signed(body, secret), now)) as SecretSignatureProof;
    assert.equal(proof.secret.position, 1);
  });

  test('another secret, or one byte of the body changed after signing: signature_mismatch', async () => {
    assert.equal(await verifyOutcome(verifier, signed(body, 'whsec_someone_else'), now), 'signature_mismatch');
    const tampered = webhookRequest(body.replace('"amount":2000', '"amount":2001'), { 'Stripe-Signature': signed(body, secret).header('stripe-signature')! });
    assert.equal(await verifyOutcome(verifier, tampered, now), 'signature_mismatch');
  });

  test('during a rotation either secret verifies, and the proof says which', async () => {
    const rotating = createDriver(stripeDriver, { secrets: ['whsec_old_one', secret] });
    const positionOf = async (withSecret: string) => ((await rotating.verify(signed(body, withSecret), now)) as SecretSignatureProof).secret.position;
    assert.equal(await positionOf(secret), 2);
    assert.equal(await positionOf('whsec_old_one'), 1);
  });

  test('signed outside the tolerance, or with no header at all: refused before any HMAC is compared', async () => {
    assert.notEqual(await verifyOutcome(verifier, signed(body, secret, signedAt - 3600), now), 'ok');
    assert.notEqual(await verifyOutcome(verifier, webhookRequest(body), now), 'ok');
  });
});
