import fc from 'fast-check';

/**
 * Random JSON *text* for the fuzz property, built as text (not through JSON.stringify of a value)
 * so it can hold what a JS value cannot say: duplicate keys, numbers beyond a double, invalid
 * UTF-8 bytes. Each fragment says whether the inbox must alter it to store it in jsonb
 * (`alters`) and how deep it nests, so the test knows the answer before it sends the body.
 */
export interface Fragment {
  text: string;
  alters: boolean;
  depth: number;
}

/** Stands for one byte 0xff inside a string (JSON.stringify leaves it as it is); the body's bytes carry the byte itself. */
export const INVALID_BYTE = '¤FF¤';

const keyUnits = ['a', 'Z', '7', ' ', 'é', 'ß', '中', '😀', '"', '\\', '/', '\n', '\u001f', '\u0000', '\ud800', '\udfff', '\\u0000'];
const hostileString = fc.string({ unit: fc.constantFrom(...keyUnits, '\uFFFD', INVALID_BYTE), maxLength: 6 });
// Keys never hold U+FFFD (or a byte that decodes to it): a key that becomes U+FFFD when cleaned
// must not meet one that already was, or "which one wins" would depend on JSON.parse's key order.
const hostileKey = fc.string({ unit: fc.constantFrom(...keyUnits), maxLength: 6 });

/** What the inbox must change in a string: U+0000, lone surrogates, invalid bytes. */
export function stringAlters(value: string): boolean {
  return value.includes('\u0000') || /[\ud800-\udfff]/u.test(value) || value.includes(INVALID_BYTE);
}

const stringFragment: fc.Arbitrary<Fragment> = hostileString.map((s) => ({ text: JSON.stringify(s), alters: stringAlters(s), depth: 0 }));

/** Numbers a double holds, and ones it does not (overflow, underflow to 0), and long integers (kept as digits). */
const numberFragment: fc.Arbitrary<Fragment> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)).map((n) => JSON.stringify(n)),
  fc.constantFrom('1e400', '-1e400', '1E+999', '2e308', '1e-400', '-4e-330', '0e-999', '1.5e308', '123456789012345678901234567890', '-9007199254740993', '0.1', '5e-324'),
).map((text) => ({ text, alters: numberAlters(text), depth: 0 }));

export function numberAlters(text: string): boolean {
  const value = Number(text);
  if (/^-?\d+$/.test(text)) return false;
  return !Number.isFinite(value) || (value === 0 && /[1-9]/.test(text.replace(/[eE].*$/, '')));
}

const scalarFragment = fc.oneof(
  stringFragment,
  numberFragment,
  fc.constantFrom<Fragment>({ text: 'true', alters: false, depth: 0 }, { text: 'null', alters: false, depth: 0 }),
);

const joined = (parts: Fragment[], open: string, close: string): Fragment => ({
  text: `${open}${parts.map((p) => p.text).join(',')}${close}`,
  alters: parts.some((p) => p.alters),
  depth: 1 + Math.max(0, ...parts.map((p) => p.depth)),
});

/** Objects (unicode keys, NUL keys, duplicate keys) and arrays, a few levels deep. */
export const valueFragment: fc.Arbitrary<Fragment> = fc.letrec<{ value: Fragment }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarFragment,
    fc.array(tie('value'), { maxLength: 4 }).map((items) => joined(items, '[', ']')),
    // Distinct keys: two entries under one key would let a later value discard an earlier altering
    // one (a NUL key), and the oracle would call a payload lossy that nothing altered (seen once:
    // `{"":{"\u0000":""},"":[]}`). Repeated keys come only from `twice`, whose wins are known.
    fc
      .uniqueArray(fc.tuple(hostileKey, tie('value'), fc.boolean()), { maxLength: 4, selector: ([key]) => key })
      .map((entries) =>
        joined(
          // `twice`: the key appears twice (the later value wins, in JSON.parse and in jsonb alike);
          // only keys stored unaltered, so two keys never become one by cleaning.
          entries.flatMap(([key, value, twice]) => {
            const member = { text: `${JSON.stringify(key)}:${value.text}`, alters: stringAlters(key) || value.alters, depth: value.depth };
            return twice && !stringAlters(key) ? [{ ...member, text: `${JSON.stringify(key)}:0` }, member] : [member];
          }),
          '{',
          '}',
        ),
      ),
  ),
})).value;

/** A value wrapped in `levels` arrays: deep nesting around an otherwise ordinary value. */
export const nestedFragment: fc.Arbitrary<Fragment> = fc
  .tuple(fc.oneof(fc.integer({ min: 1, max: 600 }), fc.constantFrom(509, 510, 5000)), scalarFragment)
  .map(([levels, inner]) => ({ text: `${'['.repeat(levels)}${inner.text}${']'.repeat(levels)}`, alters: inner.alters, depth: levels }));

/** The body's bytes: the text as UTF-8, with each INVALID_BYTE marker as the single byte 0xff. */
export function bodyBytes(text: string): Buffer {
  const parts = text.split(INVALID_BYTE).map((part) => Buffer.from(part));
  return Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [Buffer.from([0xff]), part])));
}

/**
 * What the payload column must hold for a body the inbox stores: the JSON as parsed, with
 * integers past 2^53 as their digits, numbers beyond a double as their source text, and U+0000,
 * lone surrogates and invalid bytes as U+FFFD (in keys too). The documented rules, written out.
 */
export function expectedPayload(text: string): unknown {
  const decoded = bodyBytes(text).toString('utf8');
  const parsed = JSON.parse(decoded, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value !== 'number' || context?.source === undefined) return value;
    if (/^-?\d+$/.test(context.source)) return Number.isSafeInteger(value) ? value : context.source;
    return numberAlters(context.source) ? context.source : value;
  });
  return clean(parsed);
}

// Under the u flag the class matches lone surrogates only (a pair is one code point).
const cleanString = (s: string) => s.replace(/[\u0000\ud800-\udfff]/gu, '\uFFFD');

function clean(value: unknown): unknown {
  if (typeof value === 'string') return cleanString(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) result[cleanString(key)] = clean(item);
    return result;
  }
  return value;
}
