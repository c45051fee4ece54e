import { readFileSync } from 'node:fs';
import type Stripe from 'stripe';

/**
 * Stripe's own published example objects: stripe-openapi-fixtures.json holds the `event`,
 * `charge`, `payment_intent`, `checkout.session`, `dispute`, `refund`, `balance_transaction` and `payout` resources of stripe/openapi
 * `openapi/fixtures3.json` (MIT, Stripe, Inc.; last changed in commit f0758b15, 2026-07-29),
 * unchanged. Tests start from them and set only the fields a history needs, typed by the
 * official `stripe` package, so a field renamed or retyped upstream fails the typecheck.
 * (The fixtures are placeholders: their charge is an uncaptured authorization with no
 * PaymentIntent, their PaymentIntent has no charge, their session has no amount.)
 */
interface Fixtures {
  event: Stripe.Event;
  charge: Stripe.Charge;
  payment_intent: Stripe.PaymentIntent;
  'checkout.session': Stripe.Checkout.Session;
  dispute: Stripe.Dispute;
  refund: Stripe.Refund;
  balance_transaction: Stripe.BalanceTransaction;
  payout: Stripe.Payout;
}

let fixtures: Fixtures | undefined;

function fixture<K extends keyof Fixtures>(name: K): Fixtures[K] {
  fixtures ??= JSON.parse(readFileSync(new URL('./stripe-openapi-fixtures.json', import.meta.url), 'utf8')) as Fixtures;
  return structuredClone(fixtures[name]);
}

export const fixtureCharge = (fields: Partial<Stripe.Charge>): Stripe.Charge => ({ ...fixture('charge'), ...fields });

export const fixturePaymentIntent = (fields: Partial<Stripe.PaymentIntent>): Stripe.PaymentIntent => ({ ...fixture('payment_intent'), ...fields });

export const fixtureCheckoutSession = (fields: Partial<Stripe.Checkout.Session>): Stripe.Checkout.Session => ({ ...fixture('checkout.session'), ...fields });

export const fixtureDispute = (fields: Partial<Stripe.Dispute>): Stripe.Dispute => ({ ...fixture('dispute'), ...fields });

export const fixtureRefund = (fields: Partial<Stripe.Refund>): Stripe.Refund => ({ ...fixture('refund'), ...fields });

export const fixtureBalanceTransaction = (fields: Partial<Stripe.BalanceTransaction>): Stripe.BalanceTransaction => ({
  ...fixture('balance_transaction'),
  ...fields,
});

export const fixturePayout = (fields: Partial<Stripe.Payout>): Stripe.Payout => ({ ...fixture('payout'), ...fields });

type EventObject = Stripe.Charge | Stripe.PaymentIntent | Stripe.Checkout.Session | Stripe.Dispute | Stripe.Payout;

/** The event envelope of the fixture around one object: the JSON body Stripe would POST. */
export function fixtureEventBody(id: string, type: Stripe.Event.Type, created: number, object: EventObject): string {
  const event = fixture('event');
  return JSON.stringify({ ...event, id, type, created, api_version: '2025-09-30.clover', data: { object } });
}
