import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { EventIdentifierError, type EventIdentifierField, MalformedPayloadError, OccurredAtOutOfRangeError } from '../errors.ts';
import type { NormalizedEvent } from '../gateways/shared/webhook-driver.ts';

// The column limits of webhook_inbox: a value past them is a body this inbox cannot store faithfully.
const normalizedEventSchema = z.object({
  eventId: z.string().min(1).max(150),
  eventType: z.string().min(1).max(80),
  resourceId: z.string().min(1).max(150).nullable(),
  occurredAt: z.date().refine((d) => !Number.isNaN(d.getTime()), 'is not a valid date'),
  payload: z.unknown().refine((p) => p !== undefined, 'is missing'),
  account: z.string().min(1).max(150).nullish(),
});

/**
 * The times occurred_at stores: years 1 to 9999 UTC. PostgreSQL's timestamptz reaches further,
 * but an instant outside these years has no four-digit ISO form (toISOString writes
 * `+010000-01-01…`, which PostgreSQL reads as a bad zone) and no gateway sends one.
 */
export const OCCURRED_AT_RANGE = { min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z') } as const;

// U+0000 (text cannot hold it) or a lone surrogate (from a `\ud800` escape: not a character, not
// encodable as UTF-8). Under the u flag a surrogate *pair* is one code point and does not match.
const UNSTORABLE_CHARACTER = /[\u0000\ud800-\udfff]/u;

/**
 * An identifier must be stored as sent, or two different ones could collide. A U+FFFD in it is
 * the gateway's own only when the body was valid UTF-8; otherwise it stands for bytes the lossy
 * decoding replaced (`…\xff` and `…\xfe` would both be `…\uFFFD`). The body is only validated when
 * an identifier holds U+FFFD, so ordinary requests never pay for it.
 */
function assertStorableIdentifier(field: EventIdentifierField, value: string | null, rawBody: Buffer): void {
  if (value === null) return;
  if (UNSTORABLE_CHARACTER.test(value) || (value.includes('\uFFFD') && !isUtf8(rawBody))) throw new EventIdentifierError(field);
}

/**
 * Every driver's output passes this one gate before it may join a batch: what fails here fails
 * this request alone (400), never the transaction it would have shared.
 */
export function validateNormalizedEvent(event: NormalizedEvent, rawBody: Buffer): NormalizedEvent {
  const result = normalizedEventSchema.safeParse(event);
  if (!result.success) {
    const where = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new MalformedPayloadError(`The event cannot be stored (${where}).`);
  }
  assertStorableIdentifier('eventId', event.eventId, rawBody);
  assertStorableIdentifier('eventType', event.eventType, rawBody);
  assertStorableIdentifier('resourceId', event.resourceId, rawBody);
  assertStorableIdentifier('account', event.account ?? null, rawBody);
  const time = event.occurredAt.getTime();
  if (time < OCCURRED_AT_RANGE.min.getTime() || time > OCCURRED_AT_RANGE.max.getTime()) throw new OccurredAtOutOfRangeError();
  return event;
}
