import { createHmac } from 'node:crypto';

export interface SignedRequest {
  body: string;
  signature: string;
}

/**
 * Stripe's scheme, computed here with node:crypto — never by the code under test:
 * `Stripe-Signature: t=<unix s>,v1=hex(HMAC-SHA256(secret, "<t>.<body>"))`.
 */
export function stripeSignatureHeader(body: string, secret: string, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** A realistic Stripe `charge.succeeded` event (the API's event object), one charge per event. */
export function chargeSucceededEvent(eventId: string, chargeId: string, createdSeconds: number): string {
  return JSON.stringify({
    id: eventId,
    object: 'event',
    api_version: '2024-06-20',
    created: createdSeconds,
    data: {
      object: {
        id: chargeId,
        object: 'charge',
        amount: 2000,
        amount_captured: 2000,
        amount_refunded: 0,
        currency: 'brl',
        status: 'succeeded',
        paid: true,
        captured: true,
        created: createdSeconds,
        description: 'Order #12345',
        metadata: { order_id: chargeId.slice(3) },
        payment_method: 'pm_card_visa',
        receipt_email: 'customer@example.com',
      },
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'charge.succeeded',
  });
}

/** `count` signed deliveries with distinct event ids under `prefix`, signed now (inside the tolerance). */
export function signedDeliveries(prefix: string, count: number, secret: string): SignedRequest[] {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, (_, i) => {
    const body = chargeSucceededEvent(`${prefix}${i}`, `ch_${prefix}${i}`, now);
    return { body, signature: stripeSignatureHeader(body, secret, now) };
  });
}
