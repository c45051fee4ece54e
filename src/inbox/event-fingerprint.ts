import { createHash } from 'node:crypto';
import type { PaymentFact, PaymentStatus } from '../domain/payments/payment-fact.ts';
import type { ProviderDriver, StoredEvent } from '../gateways/shared/webhook-driver.ts';

/**
 * What an event says, reduced to what every resend of it must repeat: its type, the resource it is
 * about, the canonical payment status its driver maps it to, when it happened, and for payment
 * facts the money. Counters a gateway changes between resends (Stripe's `pending_webhooks`,
 * `request`), request timestamps and key order are not part of it.
 */
export interface EventMeaning {
  eventType: string;
  resourceId: string | null;
  /** Null for events that are not payment facts (or whose driver cannot read them). */
  status: PaymentStatus | null;
  /** ISO-8601; null when the event's time is only the request's (receipt or attempt time). */
  occurredAt: string | null;
  amount: number | null;
  amountRefunded: number | null;
  currency: string | null;
}

export const meaningFields = [
  'eventType',
  'resourceId',
  'status',
  'occurredAt',
  'amount',
  'amountRefunded',
  'currency',
] as const satisfies readonly (keyof EventMeaning)[];

export type MeaningField = (typeof meaningFields)[number];

/** One field a conflicting duplicate says differently: the stored event's value and the request's. */
export interface MeaningDifference {
  field: MeaningField;
  stored: string | number | null;
  received: string | number | null;
}

/** The part of a driver the meaning needs (pure: no I/O). */
export type PaymentFactReader = Pick<ProviderDriver, 'toPaymentFact'>;

/** A stored event or a request not yet serialised (whose payload_lossy mark is not known yet: meaning never reads it). */
export interface MeaningInput extends Omit<StoredEvent, 'payloadLossy'> {
  payloadLossy?: boolean;
  occurredAtIsRequestTime?: boolean;
}

function paymentFactOf(event: MeaningInput, driver: PaymentFactReader | undefined): PaymentFact | null {
  try {
    return driver?.toPaymentFact({ ...event, payloadLossy: event.payloadLossy ?? false }) ?? null;
  } catch {
    // A body the driver cannot map fails later, in processing, where it is reported; at ingest it
    // simply has no payment meaning. The same body always lands here, so resends still match.
    return null;
  }
}

// NaN would differ from itself and print as null: an amount that is no number says nothing.
const finiteOrNull = (value: number | undefined) => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Pure: the same event (any resend of it) always gives the same meaning. */
export function eventMeaning(event: MeaningInput, driver: PaymentFactReader | undefined): EventMeaning {
  const fact = paymentFactOf(event, driver);
  return {
    eventType: event.eventType,
    resourceId: event.resourceId,
    status: fact?.status ?? null,
    occurredAt: event.occurredAtIsRequestTime ? null : event.occurredAt.toISOString(),
    amount: finiteOrNull(fact?.amount),
    amountRefunded: finiteOrNull(fact?.amountRefunded),
    currency: fact?.currency ?? null,
  };
}

/**
 * SHA-256 (hex) of the meaning: a self-contained value, comparable without the body it came from.
 * The array keeps the fields' order fixed; JSON.stringify gives every value one spelling.
 */
export function meaningFingerprint(meaning: EventMeaning): string {
  const material = JSON.stringify(meaningFields.map((field) => meaning[field]));
  return createHash('sha256').update(material).digest('hex');
}

export function eventFingerprint(event: MeaningInput, driver: PaymentFactReader | undefined): string {
  return meaningFingerprint(eventMeaning(event, driver));
}

/** The fields two meanings disagree on, in a fixed order; empty when they say the same. */
export function meaningDifferences(stored: EventMeaning, received: EventMeaning): MeaningDifference[] {
  return meaningFields.filter((field) => stored[field] !== received[field]).map((field) => ({ field, stored: stored[field], received: received[field] }));
}
