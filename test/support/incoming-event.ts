import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';

/** A Stripe charge.succeeded as the receiver hands it to the ingestor (verified, parsed), for charge `ch_<eventId>`. */
export function incomingChargeSucceeded(eventId: string): IncomingEvent {
  const payload = { id: eventId, object: 'event', type: 'charge.succeeded', data: { object: { id: `ch_${eventId}` } } };
  return {
    provider: 'stripe',
    event: { eventId, eventType: 'charge.succeeded', resourceId: `ch_${eventId}`, occurredAt: new Date(), payload },
    rawBody: Buffer.from(JSON.stringify(payload)),
    fingerprint: eventId,
    proof: { scheme: 'none', verifiedAt: new Date().toISOString() },
  };
}
