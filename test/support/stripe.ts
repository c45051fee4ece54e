import { createHmac } from 'node:crypto';
import Stripe from 'stripe';

// The official SDK is the independent signer: the code under test never signs its own fixtures.
const stripe = new Stripe('sk_test_not_used_for_network');

export function stripeSignature(payload: string, secret: string, timestampSeconds = Math.floor(Date.now() / 1000)): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: timestampSeconds });
}

export interface ChargeEventOptions {
  id: string;
  type: string;
  chargeId: string;
  created: number;
  amount?: number;
  amountRefunded?: number;
  disputeStatus?: 'won' | 'lost' | 'needs_response' | 'warning_needs_response' | 'warning_closed';
  /** False for a manual-capture charge not captured (yet): an authorization. Default true. */
  captured?: boolean;
  /** Default: everything refunded (Stripe also sets it on a voided or lapsed authorization). */
  refunded?: boolean;
  /** The charge's PaymentIntent (null: a Charges API charge). */
  paymentIntent?: string;
}

/** A realistic Stripe charge event (the shape of the API's `event` object). */
export function chargeEvent(options: ChargeEventOptions): string {
  const amount = options.amount ?? 2000;
  const amountRefunded = options.amountRefunded ?? 0;
  const captured = options.captured ?? true;
  const paymentIntent = options.paymentIntent ?? null;
  const object = options.type.startsWith('charge.dispute.')
    ? {
        id: `dp_${options.chargeId.slice(3)}`,
        object: 'dispute',
        charge: options.chargeId,
        payment_intent: paymentIntent,
        amount,
        currency: 'brl',
        status: options.disputeStatus ?? 'needs_response',
      }
    : {
        id: options.chargeId,
        object: 'charge',
        amount,
        amount_captured: captured ? amount : 0,
        amount_refunded: amountRefunded,
        captured,
        currency: 'brl',
        payment_intent: paymentIntent,
        refunded: options.refunded ?? amountRefunded >= amount,
        status: options.type === 'charge.failed' ? 'failed' : options.type === 'charge.pending' ? 'pending' : 'succeeded',
        created: options.created,
      };
  return JSON.stringify({
    id: options.id,
    object: 'event',
    api_version: '2024-06-20',
    created: options.created,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: options.type,
  });
}

export async function postStripe(baseUrl: string, body: string, secret: string, init: { provider?: string; signature?: string } = {}) {
  return fetch(`${baseUrl}/webhooks/${init.provider ?? 'stripe'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': init.signature ?? stripeSignature(body, secret) },
    body,
  });
}

/**
 * A Stripe-Signature over exact bytes, by node:crypto following Stripe's documented scheme
 * (HMAC-SHA256 of `${t}.${body}`): the SDK's test signer takes a string, which cannot carry
 * bytes that are not valid UTF-8.
 */
export function stripeSignatureOfBytes(body: Buffer, secret: string, timestampSeconds = Math.floor(Date.now() / 1000)): string {
  const digest = createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex');
  return `t=${timestampSeconds},v1=${digest}`;
}

/** A succeeded R$20.00 charge as Stripe's API answers a GET (the fields the refetch reads), for fake APIs. */
export function stripeCharge(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    object: 'charge',
    amount: 2000,
    amount_captured: 2000,
    amount_refunded: 0,
    captured: true,
    currency: 'brl',
    disputed: false,
    refunded: false,
    status: 'succeeded',
    ...overrides,
  };
}
