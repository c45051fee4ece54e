import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { hasEscapedKey, parseJsonText } from '../../src/format/json-parse.ts';

// Every one-character escape, as a key after `x` and as a key alone, parsed by this process's
// JSON.parse before anything below: on Node 24 each later key of these shapes would read back as
// one parsed here (nodejs/node#63785), so parseJsonText must not lean on JSON.parse for them.
const ONE_CHARACTER_ESCAPES = ['\\\\', '\\"', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u0041', '\\u0000', '\\ud800'];
for (const oneEscape of ONE_CHARACTER_ESCAPES) {
  JSON.parse(`{"x":1,"${oneEscape}":0}`);
  JSON.parse(`{"${oneEscape}":0}`);
}

/**
 * Random JSON as text, never as a value: an object made here with a key would give V8 that key's
 * transition, and JSON.parse reads an escaped key right when the right transition already exists.
 * `compact` is the text as JSON.stringify writes the value back: keys are never all digits (an
 * object lists those first) and never repeat.
 */
const unit = fc.constantFrom('a', 'x', '"', '\\', '/', '\n', '\t', '\b', '\f', '\r', '\u0000', '\u001f', 'é', '😀', '\ud800', '\udfff', '__proto__');
const whitespace = fc.constantFrom('', '', ' ', '\n  ', '\t');
const jsonString = fc.string({ unit, maxLength: 3 }).map((s) => JSON.stringify(s));
const scalar = fc.constantFrom('0', '-1.5', '1e+21', 'true', 'false', 'null');
const joined = (parts: { text: string; compact: string }[], open: string, close: string, gap: string) => ({
  text: `${open}${gap}${parts.map((p) => p.text).join(`${gap},${gap}`)}${gap}${close}`,
  compact: `${open}${parts.map((p) => p.compact).join(',')}${close}`,
});
const jsonText = fc.letrec<{ value: { text: string; compact: string } }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(scalar, jsonString).map((text) => ({ text, compact: text })),
    fc.tuple(fc.array(tie('value'), { maxLength: 3 }), whitespace).map(([items, gap]) => joined(items, '[', ']', gap)),
    fc.tuple(fc.uniqueArray(fc.tuple(jsonString, tie('value')), { maxLength: 3, selector: ([key]) => key }), whitespace).map(([members, gap]) =>
      joined(
        members.map(([key, value]) => ({ text: `${key}${gap}:${gap}${value.text}`, compact: `${key}:${value.compact}` })),
        '{',
        '}',
        gap,
      ),
    ),
  ),
})).value;

describe('hasEscapedKey: whether any object key holds a backslash', () => {
  test('keys, not values; whitespace before the colon; strings ending in an escaped backslash or quote', () => {
    const cases: [string, boolean][] = [
      ['{"a":"b","c":[1,{"d":null}]}', false],
      ['{"url":"https:\\/\\/example.com\\/x","n":"line\\nbreak"}', false],
      ['{"a":"x\\":1","b":2}', false],
      ['{"a":"\\\\","b":1}', false],
      ['{"a":"\\"","b":"\\\\\\""}', false],
      ['["\\n",{"k":"\\t"}]', false],
      ['"\\u0041"', false],
      ['{"a\\"b":1}', true],
      ['{"a":{"b":["\\/",{"c\\\\" \n\t: 1}]}}', true],
      ['{"a":"\\\\","\\u0062":1}', true],
      ['{"a\\', true],
    ];
    for (const [text, expected] of cases) assert.equal(hasEscapedKey(text), expected, text);
  });
});

describe('parseJsonText: the value the text says, on every Node', () => {
  test('any JSON text, compact or spaced, reads back as written (escaped keys included)', () => {
    fc.assert(
      fc.property(jsonText, ({ text, compact }) => {
        assert.equal(JSON.stringify(parseJsonText(text)), compact);
      }),
      { numRuns: 1000 },
    );
  });

  test("escaped keys or not: `__proto__` is an own key, the last of equal keys wins in the first one's place", () => {
    for (const text of ['{"__proto__":{"polluted":1},"k":0}', '{"__proto__":{"polluted":1},"k\\n":0}']) {
      const value = parseJsonText(text) as Record<string, unknown>;
      assert.equal(Object.getPrototypeOf(value), Object.prototype, text);
      assert.deepEqual(Object.keys(value), ['__proto__', text.includes('\\n') ? 'k\n' : 'k']);
    }
    const plain = parseJsonText('{"a":1,"b":2,"a":3}') as object;
    const escaped = parseJsonText('{"a\\n":1,"b":2,"a\\n":3}') as object;
    assert.deepEqual(Object.entries(plain), [
      ['a', 3],
      ['b', 2],
    ]);
    assert.deepEqual(Object.entries(escaped), [
      ['a\n', 3],
      ['b', 2],
    ]);
  });

  test('numbers go through the reviver with their source text on both paths', () => {
    const sources: string[] = [];
    const revive = (source: string) => {
      sources.push(source);
      return source;
    };
    assert.deepEqual(parseJsonText('{"k":[1e400,-0.5]}', revive), { k: ['1e400', '-0.5'] });
    assert.deepEqual(parseJsonText('{"k\\t":[12345678901234567890,2E-3]}', revive), { 'k\t': ['12345678901234567890', '2E-3'] });
    assert.deepEqual(sources, ['1e400', '-0.5', '12345678901234567890', '2E-3']);
  });

  test('what JSON.parse refuses is refused with a SyntaxError on both paths', () => {
    const notJson = ['{"k":1,}', '{"k\\n":1,}', '{"k\\n":1}\u000b', '{"k\\n":"tab\there"}', "{'k\\n':1}", '{"k\\n":01}', '{"k\\n":1} x', '{"k\\x":1}', ''];
    for (const text of notJson) assert.throws(() => parseJsonText(text), SyntaxError, JSON.stringify(text));
  });

  test('512 levels inside an object with an escaped key', () => {
    const text = `{"k\\n":${'['.repeat(512)}${']'.repeat(512)}}`;
    let depth = 0;
    for (let value = (parseJsonText(text) as Record<string, unknown>)['k\n']; Array.isArray(value); value = value[0]) depth += 1;
    assert.equal(depth, 512);
  });
});
