import fc from 'fast-check';

/**
 * Random JSON *text* for the fuzz property, built as text (not through JSON.stringify of a value)
 * so it can hold what a JS value cannot say: duplicate keys, numbers beyond a double, invalid
 * UTF-8 bytes. Each fragment says whether the inbox must alter it to store it in jsonb
 * (`alters`), how deep it nests, and the value the payload column must hold for it (`stored`),
 * so the test knows the answer before it sends the body. `stored` is built beside the text, never
 * by parsing it: this process's JSON.parse misreads escaped keys too (nodejs/node#63785).
 */
export interface Fragment {
  text: string;
  alters: boolean;
  depth: number;
  stored: unknown;
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

// Under the u flag the class matches lone surrogates only (a pair is one code point).
const cleanString = (s: string) => s.replace(/[\u0000\ud800-\udfff]/gu, '\uFFFD');

/** A string as the payload holds it: an invalid byte decoded as U+FFFD, then U+0000 and lone surrogates as U+FFFD. */
export const storedString = (s: string) => cleanString(s.replaceAll(INVALID_BYTE, '\uFFFD'));

const stringFragment: fc.Arbitrary<Fragment> = hostileString.map((s) => ({
  text: JSON.stringify(s),
  alters: stringAlters(s),
  depth: 0,
  stored: storedString(s),
}));

/** Numbers a double holds, and ones it does not (overflow, underflow to 0), and long integers (kept as digits). */
const numberFragment: fc.Arbitrary<Fragment> = fc
  .oneof(
    fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .filter((n) => !Object.is(n, -0))
      .map((n) => JSON.stringify(n)),
    fc.constantFrom(
      '1e400',
      '-1e400',
      '1E+999',
      '2e308',
      '1e-400',
      '-4e-330',
      '0e-999',
      '1.5e308',
      '123456789012345678901234567890',
      '-9007199254740993',
      '0.1',
      '5e-324',
    ),
  )
  .map((text) => ({ text, alters: numberAlters(text), depth: 0, stored: storedNumber(text) }));

export function numberAlters(text: string): boolean {
  const value = Number(text);
  if (/^-?\d+$/.test(text)) return false;
  return !Number.isFinite(value) || (value === 0 && /[1-9]/.test(text.replace(/[eE].*$/, '')));
}

/** Integers past 2^53 as their digits, numbers beyond a double as their source text, the rest as the double. */
function storedNumber(text: string): number | string {
  const value = Number(text);
  if (/^-?\d+$/.test(text)) return Number.isSafeInteger(value) ? value : text;
  return numberAlters(text) ? text : value;
}

const scalarFragment = fc.oneof(
  stringFragment,
  numberFragment,
  fc.constantFrom<Fragment>({ text: 'true', alters: false, depth: 0, stored: true }, { text: 'null', alters: false, depth: 0, stored: null }),
);

const joined = (parts: Fragment[], open: string, close: string, stored: unknown): Fragment => ({
  text: `${open}${parts.map((p) => p.text).join(',')}${close}`,
  alters: parts.some((p) => p.alters),
  depth: 1 + Math.max(0, ...parts.map((p) => p.depth)),
  stored,
});

/**
 * An object's members in text order, as the payload holds them: keys cleaned like strings, the
 * last of equal keys wins (JSON.parse and jsonb alike). Set as JSON.parse sets them, so a
 * `__proto__` key would be an own property.
 */
function storedObject(members: readonly { key: string; stored: unknown }[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const { key, stored } of members)
    Object.defineProperty(object, storedString(key), { value: stored, writable: true, enumerable: true, configurable: true });
  return object;
}

/** Objects (unicode keys, NUL keys, duplicate keys) and arrays, a few levels deep. */
export const valueFragment: fc.Arbitrary<Fragment> = fc.letrec<{ value: Fragment }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarFragment,
    fc.array(tie('value'), { maxLength: 4 }).map((items) =>
      joined(
        items,
        '[',
        ']',
        items.map((item) => item.stored),
      ),
    ),
    // Distinct keys: two entries under one key would let a later value discard an earlier altering
    // one (a NUL key), and the oracle would call a payload lossy that nothing altered (seen once:
    // `{"":{"\u0000":""},"":[]}`). Repeated keys come only from `twice`, whose wins are known.
    fc.uniqueArray(fc.tuple(hostileKey, tie('value'), fc.boolean()), { maxLength: 4, selector: ([key]) => key }).map((entries) => {
      // `twice`: the key appears twice (the later value wins, in JSON.parse and in jsonb alike);
      // only keys stored unaltered, so two keys never become one by cleaning.
      const members = entries.flatMap(([key, value, twice]) => {
        const member = {
          key,
          text: `${JSON.stringify(key)}:${value.text}`,
          alters: stringAlters(key) || value.alters,
          depth: value.depth,
          stored: value.stored,
        };
        return twice && !stringAlters(key) ? [{ ...member, text: `${JSON.stringify(key)}:0`, stored: 0 }, member] : [member];
      });
      return joined(members, '{', '}', storedObject(members));
    }),
  ),
})).value;

function wrappedInArrays(value: unknown, levels: number): unknown {
  let wrapped = value;
  for (let level = 0; level < levels; level += 1) wrapped = [wrapped];
  return wrapped;
}

/** A value wrapped in `levels` arrays: deep nesting around an otherwise ordinary value. */
export const nestedFragment: fc.Arbitrary<Fragment> = fc
  .tuple(fc.oneof(fc.integer({ min: 1, max: 600 }), fc.constantFrom(509, 510, 5000)), scalarFragment)
  .map(([levels, inner]) => ({
    text: `${'['.repeat(levels)}${inner.text}${']'.repeat(levels)}`,
    alters: inner.alters,
    depth: levels,
    stored: wrappedInArrays(inner.stored, levels),
  }));

/** The body's bytes: the text as UTF-8, with each INVALID_BYTE marker as the single byte 0xff. */
export function bodyBytes(text: string): Buffer {
  const parts = text.split(INVALID_BYTE).map((part) => Buffer.from(part));
  return Buffer.concat(parts.flatMap((part, i) => (i === 0 ? [part] : [Buffer.from([0xff]), part])));
}
