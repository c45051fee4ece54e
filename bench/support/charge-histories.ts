import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { eventFingerprint } from '../../src/inbox/event-fingerprint.ts';
import { builtInDrivers } from '../../src/gateways/registry.ts';
import { chargeSucceededEvent } from './signed-events.ts';

/**
 * One charge's life in ten Stripe events, one second apart: pending, succeeded, captured, two
 * partial refunds, a dispute opened and won, a larger partial refund, the full refund, and a
 * `charge.updated` no handler knows. It ends `refunded`; two of the ten change nothing (`ignored`).
 */
const STEPS: Array<{ type: string; refunded?: number; dispute?: 'needs_response' | 'won' }> = [
  { type: 'charge.pending' },
  { type: 'charge.succeeded' },
  { type: 'charge.captured' },
  { type: 'charge.refunded', refunded: 200 },
  { type: 'charge.refunded', refunded: 500 },
  { type: 'charge.dispute.created', dispute: 'needs_response' },
  { type: 'charge.dispute.closed', dispute: 'won' },
  { type: 'charge.refunded', refunded: 1000 },
  { type: 'charge.refunded', refunded: 2000 },
  { type: 'charge.updated' },
];

function stripeEventBody(eventId: string, chargeId: string, step: (typeof STEPS)[number], created: number): string {
  const object = step.dispute
    ? { id: `dp_${chargeId.slice(3)}`, object: 'dispute', charge: chargeId, amount: 2000, currency: 'brl', status: step.dispute, created }
    : {
        id: chargeId,
        object: 'charge',
        amount: 2000,
        amount_refunded: step.refunded ?? 0,
        currency: 'brl',
        status: step.type === 'charge.pending' ? 'pending' : 'succeeded',
        created,
      };
  return JSON.stringify({
    id: eventId,
    object: 'event',
    api_version: '2024-06-20',
    created,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: step.type,
  });
}

/**
 * `charges` histories as the receiver would have stored them (normalised by the real Stripe
 * driver), in arrival rounds: every charge's first event, then every charge's second, …
 */
export function chargeHistories(prefix: string, charges: number, secret: string): IncomingEvent[] {
  const driver = builtInDrivers.stripe!.create({ name: 'stripe', secrets: [secret], signatureToleranceSeconds: 300, options: {} });
  const start = Math.floor(Date.now() / 1000) - 3600;
  const events: IncomingEvent[] = [];
  STEPS.forEach((step, index) => {
    for (let charge = 0; charge < charges; charge += 1) {
      const chargeId = `ch_${prefix}${charge}`;
      const rawBody = Buffer.from(stripeEventBody(`evt_${prefix}${charge}_${index}`, chargeId, step, start + (charge % 600) + index));
      const event = driver.parse({ rawBody, header: () => undefined, query: new URLSearchParams() }, new Date());
      const proof = { scheme: 'none', verifiedAt: new Date().toISOString() } as const;
      events.push({ provider: 'stripe', event, rawBody, fingerprint: eventFingerprint({ provider: 'stripe', ...event }, driver), proof });
    }
  });
  return events;
}

/**
 * `count` charges that each arrive as one `charge.succeeded` (event ids `evt_<prefix><i>`), as the
 * receiver would have stored them: one payment change each, the forwarding row's traffic as a backlog.
 */
export function chargeSucceededBacklog(prefix: string, count: number, secret: string): IncomingEvent[] {
  const driver = builtInDrivers.stripe!.create({ name: 'stripe', secrets: [secret], signatureToleranceSeconds: 300, options: {} });
  const created = Math.floor(Date.now() / 1000) - 600;
  return Array.from({ length: count }, (_, i) => {
    const rawBody = Buffer.from(chargeSucceededEvent(`evt_${prefix}${i}`, `ch_${prefix}${i}`, created));
    const event = driver.parse({ rawBody, header: () => undefined, query: new URLSearchParams() }, new Date());
    const proof = { scheme: 'none', verifiedAt: new Date().toISOString() } as const;
    return { provider: 'stripe', event, rawBody, fingerprint: eventFingerprint({ provider: 'stripe', ...event }, driver), proof };
  });
}
