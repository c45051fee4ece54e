import { visit } from 'jsonc-parser';

/**
 * JSON.parse for text from outside the process: gateway bodies and API answers, archives, stored
 * payloads read back, configuration files.
 *
 * Node 24's V8 (and 26's) reads some object keys written with an escape as a key parsed earlier in
 * the process: after `{"x":1,"\\":0}`, the text `{"x":1,"\"":0}` parses with the key `\`, not `"`
 * (nodejs/node#63785, open; `\n`, `\t`, `\u0041` alike). A key without an escape cannot be misread:
 * its source text is its value, and V8 only takes a key it already knows when the text matches it.
 * So a text whose keys hold no backslash (nearly every body: Stripe's hold none at all) takes
 * JSON.parse; the rest is parsed by jsonc-parser's scanner, which decodes every string itself.
 */

/** What a number becomes, from its source text and its value as a double (a reviver's view of it). */
export type NumberReviver = (source: string, value: number) => unknown;

// The rest of a string literal from an escape inside it to its closing quote (unrolled: each
// character is looked at once), then whether a colon follows: the string was a key.
const STRING_REST = /[^"\\]*(?:\\[^][^"\\]*)*"/y;
const COLON_NEXT = /[ \t\n\r]*:/y;

/**
 * Whether any object key in the text holds an escape. Outside strings JSON has no backslash, so
 * the first backslash after a string's end starts an escape inside the next string that has one:
 * from there to that string's end, then on to the next backslash. A string without a backslash is
 * never looked at; a text without one costs one indexOf.
 */
export function hasEscapedKey(text: string): boolean {
  for (let at = text.indexOf('\\'); at !== -1; at = text.indexOf('\\', STRING_REST.lastIndex)) {
    STRING_REST.lastIndex = at;
    // No closing quote: not JSON, and the careful path says so.
    if (!STRING_REST.test(text)) return true;
    COLON_NEXT.lastIndex = STRING_REST.lastIndex;
    if (COLON_NEXT.test(text)) return true;
  }
  return false;
}

/**
 * JSON.parse's value, as the text says it (a `__proto__` key is an own property, the last of
 * duplicate keys wins in the first one's place, `\ud800` is a lone surrogate). Throws SyntaxError
 * when the text is not JSON, as JSON.parse does. `reviveNumber`, when given, decides what each
 * number becomes.
 */
export function parseJsonText(text: string, reviveNumber?: NumberReviver): unknown {
  if (!hasEscapedKey(text)) return reviveNumber === undefined ? JSON.parse(text) : JSON.parse(text, numbersRevivedBy(reviveNumber));
  // JSON.parse still decides what is JSON (jsonc-parser is lenient about whitespace): only its keys are wrong here.
  JSON.parse(text);
  return parseKeysByHand(text, reviveNumber);
}

function numbersRevivedBy(reviveNumber: NumberReviver) {
  return (_key: string, value: unknown, context?: { source?: string }): unknown =>
    typeof value === 'number' && context?.source !== undefined ? reviveNumber(context.source, value) : value;
}

const property = (value: unknown): PropertyDescriptor => ({ value, writable: true, enumerable: true, configurable: true });

/** Builds the value from jsonc-parser's events; each key set as JSON.parse sets it (CreateDataProperty). */
function parseKeysByHand(text: string, reviveNumber: NumberReviver | undefined): unknown {
  const open: (Record<string, unknown> | unknown[])[] = [];
  let key = '';
  let root: unknown;
  const place = (value: unknown) => {
    const parent = open.at(-1);
    if (parent === undefined) root = value;
    else if (Array.isArray(parent)) parent.push(value);
    else Object.defineProperty(parent, key, property(value));
  };
  const enter = (container: Record<string, unknown> | unknown[]) => {
    place(container);
    open.push(container);
  };
  visit(
    text,
    {
      onObjectBegin: () => enter({}),
      onArrayBegin: () => enter([]),
      onObjectEnd: () => void open.pop(),
      onArrayEnd: () => void open.pop(),
      onObjectProperty: (name) => {
        key = name;
      },
      onLiteralValue: (value: unknown, offset, length) =>
        place(typeof value === 'number' && reviveNumber !== undefined ? reviveNumber(text.slice(offset, offset + length), value) : value),
      // JSON.parse accepted the text: a complaint here is a defect to fix, never the sender's (not a SyntaxError, so no caller answers 400).
      onError: (code, offset) => {
        throw new Error(`jsonc-parser could not read JSON that JSON.parse accepted (its error ${code} at offset ${offset})`);
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
  return root;
}
