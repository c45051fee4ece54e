import { chargeEvent } from '../../support/stripe.ts';
import type { SignedDelivery } from './gateway.ts';

/** `count` distinct, realistic Stripe charge events, one charge each (so each has exactly one effect). */
export function distinctChargeEvents(prefix: string, count: number): SignedDelivery[] {
  const created = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, (_, i) => {
    const eventId = `${prefix}${i}`;
    return { eventId, body: chargeEvent({ id: eventId, type: 'charge.succeeded', chargeId: `ch_${prefix}${i}`, created }) };
  });
}
