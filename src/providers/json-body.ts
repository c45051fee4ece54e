import type { z } from 'zod';
import { MalformedPayloadError } from '../errors.ts';

/**
 * Parses the verified bytes as JSON and checks the envelope the driver relies on. Returns both:
 * `json` is what gets stored (every field as received), `envelope` is the validated view.
 */
export function parseJsonBody<T extends z.ZodType>(
  rawBody: Buffer,
  envelope: T,
  provider: string,
): { json: unknown; envelope: z.infer<T> } {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch (error) {
    throw new MalformedPayloadError('The body is not valid JSON.', { cause: error });
  }
  const result = envelope.safeParse(value);
  if (!result.success) {
    const where = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new MalformedPayloadError(`The body is not a ${provider} event this driver understands (${where}).`);
  }
  return { json: value, envelope: result.data };
}

/** Reads a dotted path (`data.object.id`) from parsed JSON; undefined when any step is missing. */
export function readPath(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
