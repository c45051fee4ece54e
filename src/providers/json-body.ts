import type { z } from 'zod';
import { MalformedPayloadError } from '../errors.ts';

// Integers past 2^53 (Shopify ids, some bank references) would be rounded by JSON.parse and then
// stored rounded. They are kept as their exact digits (a string) instead, read from the source
// text the reviver receives (Node ≥ 22); the raw bytes stay in raw_body either way. The reviver
// only runs when the text has a long digit run, so ordinary bodies take the fast path.
const LONG_DIGIT_RUN = /\d{16,}/;

function keepUnsafeIntegersExact(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)) {
    return context.source;
  }
  return value;
}

/** JSON.parse for gateway bodies; throws MalformedPayloadError when the bytes are not JSON. */
export function parseJson(rawBody: Buffer): unknown {
  const text = rawBody.toString('utf8');
  try {
    return LONG_DIGIT_RUN.test(text) ? JSON.parse(text, keepUnsafeIntegersExact as (key: string, value: unknown) => unknown) : JSON.parse(text);
  } catch (error) {
    throw new MalformedPayloadError('The body is not valid JSON.', { cause: error });
  }
}

/** Checks a parsed body against the envelope a driver relies on; the message names every failing field. */
export function validateEnvelope<T extends z.ZodType>(value: unknown, envelope: T, provider: string): z.infer<T> {
  const result = envelope.safeParse(value);
  if (!result.success) {
    const where = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new MalformedPayloadError(`The body is not a ${provider} event this driver understands (${where}).`);
  }
  return result.data;
}

/**
 * Parses the verified bytes as JSON and checks the envelope the driver relies on. Returns both:
 * `json` is what gets stored (every field as received), `envelope` is the validated view.
 */
export function parseJsonBody<T extends z.ZodType>(
  rawBody: Buffer,
  envelope: T,
  provider: string,
): { json: unknown; envelope: z.infer<T> } {
  const json = parseJson(rawBody);
  return { json, envelope: validateEnvelope(json, envelope, provider) };
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

/**
 * An identifier at a path as a string: a non-empty string as is, an integer as its digits
 * (integers past 2^53 are already digit strings, see parseJson). Undefined otherwise.
 */
export function readIdentifier(value: unknown, path: string): string | undefined {
  const found = readPath(value, path);
  if (typeof found === 'string') return found.length > 0 ? found : undefined;
  if (typeof found === 'number' && Number.isSafeInteger(found)) return String(found);
  return undefined;
}
