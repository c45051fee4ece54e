import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyDatabaseError } from '../../src/db/database-errors.ts';
import { PayloadTooDeepError } from '../../src/errors.ts';
import { toJsonbText } from '../../src/inbox/event-row.ts';
import { assertNestingWithinLimit, parseJson, wasAlteredByParse } from '../../src/gateways/shared/json-body.ts';

describe('toJsonbText: what jsonb refuses, and only that, becomes U+FFFD', () => {
  test('U+0000 and lone surrogates are replaced; pairs, other escapes and an escaped backslash before "u0000" are not', () => {
    const cases: [unknown, string, boolean][] = [
      ['a\u0000b', '"a\\ufffdb"', true],
      ['x\ud800y\udfffz', '"x\\ufffdy\\ufffdz"', true],
      ['😀 é \u0001', '"😀 é \\u0001"', false],
      ['\\u0000', '"\\\\u0000"', false],
      ['\\\u0000', '"\\\\\\ufffd"', true],
      [{ 'k\u0000': ['\ud83d'] }, '{"k\\ufffd":["\\ufffd"]}', true],
    ];
    for (const [value, text, replaced] of cases) assert.deepEqual(toJsonbText(JSON.stringify(value)), { text, replaced }, JSON.stringify(value));
  });
});

describe('parseJson: depth and numbers', () => {
  test('nesting is counted without recursion, brackets inside strings ignored', () => {
    const deep = (levels: number) => Buffer.from(`${'['.repeat(levels)}${']'.repeat(levels)}`);
    assert.doesNotThrow(() => assertNestingWithinLimit(deep(512)));
    assert.throws(() => assertNestingWithinLimit(deep(513)), PayloadTooDeepError);
    assert.throws(() => parseJson(deep(100_000)), PayloadTooDeepError);
    assert.doesNotThrow(() => assertNestingWithinLimit(Buffer.from(JSON.stringify({ text: '['.repeat(5000), escaped: '\\"[[[' }))));
  });

  test('numbers beyond a double are kept as their text and mark the payload; long integers are kept as digits, unmarked', () => {
    const altered = parseJson(Buffer.from('{"big":1e400,"tiny":-2e-400,"zero":0e-999,"fine":1.5e308}'));
    assert.deepEqual(altered, { big: '1e400', tiny: '-2e-400', zero: 0, fine: 1.5e308 });
    assert.equal(wasAlteredByParse(altered), true);
    const ids = parseJson(Buffer.from('{"id":12345678901234567890,"n":2}'));
    assert.deepEqual(ids, { id: '12345678901234567890', n: 2 });
    assert.equal(wasAlteredByParse(ids), false);
  });
});

describe('parseJson: keys written with an escape (nodejs/node#63785)', () => {
  test('the trigger pair, parsed one after the other in this process: each key as written', () => {
    const keysOf = (text: string) => Object.keys(parseJson(Buffer.from(text)) as object);
    assert.deepEqual(keysOf('{"x":1,"\\\\":0}'), ['x', '\\']);
    // Node 24's JSON.parse answers ['x', '\\'] for each of these from here on.
    assert.deepEqual(keysOf('{"x":1,"\\"":0}'), ['x', '"']);
    assert.deepEqual(keysOf('{"x":1,"\\n":0}'), ['x', '\n']);
    assert.deepEqual(keysOf('{"x":1,"\\t":0}'), ['x', '\t']);
    assert.deepEqual(keysOf('{"x":1,"\\u0041":0}'), ['x', 'A']);
  });

  test('a body with an escaped key keeps the rest of the contract: numbers beyond a double as text (marked), long integers as digits', () => {
    const altered = parseJson(Buffer.from('{"k\\n":1e400,"id":12345678901234567890,"n":2.5}'));
    assert.deepEqual(altered, { 'k\n': '1e400', id: '12345678901234567890', n: 2.5 });
    assert.equal(wasAlteredByParse(altered), true);
    const ids = parseJson(Buffer.from('{"k\\n":12345678901234567890}'));
    assert.equal(wasAlteredByParse(ids), false);
    assert.throws(() => parseJson(Buffer.from('{"k\\n":1,}')), { code: 'malformed_payload' });
  });
});

describe('classifyDatabaseError', () => {
  test('data, availability, or unknown, by SQLSTATE class and connection code', () => {
    const pg = (code: string, extra: object = {}) => Object.assign(new Error('x'), { name: 'PostgresError', code, ...extra });
    const cases: [unknown, string][] = [
      [pg('22P02'), 'data'],
      [pg('23514'), 'data'],
      [pg('54001'), 'data'],
      [pg('23505', { constraint_name: 'webhook_event_keys_pkey' }), 'unknown'],
      [pg('08006'), 'availability'],
      [pg('40P01'), 'availability'],
      [pg('53100'), 'availability'],
      [pg('57P01'), 'availability'],
      [pg('42P01'), 'unknown'],
      [pg('P0001'), 'unknown'],
      [Object.assign(new Error('closed'), { code: 'CONNECTION_CLOSED' }), 'availability'],
      [new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })]), 'availability'],
      [Object.assign(new Error('refused a job'), { code: 'job_not_created' }), 'unknown'],
      [new TypeError('a bug'), 'unknown'],
      [undefined, 'unknown'],
    ];
    for (const [error, expected] of cases) assert.equal(classifyDatabaseError(error), expected, String((error as { code?: string })?.code ?? error));
  });
});
