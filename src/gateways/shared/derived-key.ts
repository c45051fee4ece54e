import { createHash } from 'node:crypto';

/** The business fact an event states, for gateways that send no event id. */
export interface BusinessFact {
  resourceId: string | null;
  eventType: string;
  status: string | null;
  /** Only a time the gateway sent: a receipt time differs on every resend and would split one event in two. */
  occurredAt: Date | null;
}

/**
 * The dedupe key of an event without a gateway id: sha256(resource_id, event_type, status,
 * occurred_at). Never a hash of the whole body: resends of one event differ in attempt counters,
 * send times and signatures, and would each pass as new. The fields are JSON-encoded as an array so
 * that no concatenation of two different facts can produce the same input.
 */
export function derivedEventKey(fact: BusinessFact): string {
  const material = JSON.stringify([fact.resourceId, fact.eventType, fact.status, fact.occurredAt?.toISOString() ?? null]);
  return `derived:${createHash('sha256').update(material).digest('hex')}`;
}
