import type { z } from 'zod';
import { MalformedPayloadError, PayloadTooDeepError } from '../../errors.ts';
import { type NumberReviver, parseJsonText } from '../../format/json-parse.ts';

/**
 * How deep a body's JSON may nest (objects and arrays, the outermost one is level 1). Gateways
 * send under 10; PHP's json_decode stops at 512 by default. Past this the body is refused before
 * it is parsed: serialising it again (JSON.stringify recurses) would overflow the stack a few
 * thousand levels down, and PostgreSQL's jsonb parser has its own stack limit.
 */
export const MAX_JSON_DEPTH = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = [0x7b, 0x5b];

/** Whether the body holds at most `limit` `{`/`[` bytes (memchr via indexOf): then it cannot nest deeper. */
function openersAtMost(body: Buffer, limit: number): boolean {
  let count = 0;
  for (const opener of OPENERS) {
    for (let at = body.indexOf(opener); at !== -1; at = body.indexOf(opener, at + 1)) if (++count > limit) return false;
  }
  return true;
}

/**
 * One pass over the bytes, no recursion, brackets inside strings skipped. Byte-wise is exact for
 * UTF-8: every byte of a multi-byte character (and every invalid byte) is 0x80 or above.
 */
function nestsDeeperThan(body: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i += 1) {
    const byte = body[i];
    if (inString) {
      if (byte === BACKSLASH) i += 1;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      if (++depth > limit) return true;
    } else if (byte === 0x7d || byte === 0x5d) depth -= 1;
  }
  return false;
}

/** Throws PayloadTooDeepError past MAX_JSON_DEPTH; an ordinary body costs one count of its brackets. */
export function assertNestingWithinLimit(body: Buffer, limit = MAX_JSON_DEPTH): void {
  if (!openersAtMost(body, limit) && nestsDeeperThan(body, limit)) throw new PayloadTooDeepError(limit);
}

/**
 * Payloads parseJson had to change to make the body a JS value (see below). A WeakSet keyed by
 * the parsed value, so every driver's payload carries the mark to the store without each driver
 * passing a flag along.
 */
const altered = new WeakSet<object>();

/** Whether parseJson replaced something in this parsed body (a number beyond a double). */
export function wasAlteredByParse(json: unknown): boolean {
  return json !== null && typeof json === 'object' && altered.has(json);
}

// Numbers the text holds but a double does not, read from their source text; the raw bytes stay in
// raw_body either way. Integers past 2^53 (Shopify ids, bank references) are kept as their exact
// digits, a string: an id, not an alteration. Numbers beyond a double (1e400 → Infinity, which
// JSON.stringify would write as null; 1e-400 → 0) are kept as their source text too, and the
// payload is marked altered. Numbers are only revived when the text has a long digit run or a
// three-digit exponent, so ordinary bodies take the fast path.
const NUMBER_BEYOND_FAST_PATH = /\d{16,}|\d[eE][+-]?\d{3}/;
const INTEGER = /^-?\d+$/;
const NONZERO_MANTISSA = /^-?0*\.?0*[1-9]/;

function numberReviverFor(marks: { altered: boolean }): NumberReviver {
  return (source, value) => {
    if (INTEGER.test(source)) return Number.isSafeInteger(value) ? value : source;
    if (Number.isFinite(value) && (value !== 0 || !NONZERO_MANTISSA.test(source))) return value;
    marks.altered = true;
    return source;
  };
}

/**
 * The body as JSON (parseJsonText: keys with escapes read right on every Node); throws
 * MalformedPayloadError when the bytes are not JSON, PayloadTooDeepError past MAX_JSON_DEPTH.
 */
export function parseJson(rawBody: Buffer): unknown {
  assertNestingWithinLimit(rawBody);
  const text = rawBody.toString('utf8');
  try {
    if (!NUMBER_BEYOND_FAST_PATH.test(text)) return parseJsonText(text);
    const marks = { altered: false };
    const json = parseJsonText(text, numberReviverFor(marks));
    if (marks.altered && json !== null && typeof json === 'object') altered.add(json);
    return json;
  } catch (error) {
    // Only the text's own fault is the sender's; anything else is ours, and answered 500.
    if (!(error instanceof SyntaxError)) throw error;
    throw new MalformedPayloadError('The body is not valid JSON.', { cause: error });
  }
}

/** Failures named in a malformed_payload message; a body can fail thousands of times over, and the answer stays short. */
const FAILURES_NAMED = 3;

/**
 * Checks a parsed body against the envelope a driver relies on; the message names the first failing
 * fields and what each should be. Zod's messages name the expected type, never the value received,
 * and the envelopes' records hold z.unknown, so a path is made of the envelope's own keys.
 */
export function validateEnvelope<T extends z.ZodType>(value: unknown, envelope: T, provider: string): z.infer<T> {
  const result = envelope.safeParse(value);
  if (!result.success) {
    const { issues } = result.error;
    const named = issues.slice(0, FAILURES_NAMED).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    if (issues.length > FAILURES_NAMED) named.push(`${issues.length - FAILURES_NAMED} more`);
    throw new MalformedPayloadError(`The body is not a ${provider} event this driver understands (${named.join('; ')}).`);
  }
  return result.data;
}

/**
 * Parses the verified bytes as JSON and checks the envelope the driver relies on. Returns both:
 * `json` is what gets stored (every field as received), `envelope` is the validated view.
 */
export function parseJsonBody<T extends z.ZodType>(rawBody: Buffer, envelope: T, provider: string): { json: unknown; envelope: z.infer<T> } {
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
