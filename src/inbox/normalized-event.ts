import { z } from 'zod';
import { MalformedPayloadError } from '../errors.ts';
import type { NormalizedEvent } from '../providers/types.ts';

// The column limits of webhook_inbox: a value past them is a body this inbox cannot store faithfully.
const normalizedEventSchema = z.object({
  eventId: z.string().min(1).max(150),
  eventType: z.string().min(1).max(80),
  resourceId: z.string().min(1).max(150).nullable(),
  occurredAt: z.date().refine((d) => !Number.isNaN(d.getTime()), 'is not a valid date'),
  payload: z.unknown().refine((p) => p !== undefined, 'is missing'),
});

/** Every driver's output passes this one gate before it may be stored. */
export function validateNormalizedEvent(event: NormalizedEvent): NormalizedEvent {
  const result = normalizedEventSchema.safeParse(event);
  if (!result.success) {
    const where = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new MalformedPayloadError(`The event cannot be stored (${where}).`);
  }
  return event;
}
