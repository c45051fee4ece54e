/**
 * docs/errors.md is the one table of error codes: every error class of src/ extends CodedError
 * (src/errors.ts), and every code a class declares in its source is in that table, so an operator
 * who greps a code finds what it means.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(import.meta.dirname, '../..');
const sources = readdirSync(path.join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => ({ file: `src/${file}`, text: readFileSync(path.join(root, 'src', file), 'utf8') }));

/** Control flow, not failures: they carry a dry run's answer out of the transaction they roll back. */
const PLAIN_ERRORS = new Set([
  'src/delivery/lane-operations.ts: DryRunRollback',
  'src/processing/replay-dry-run.ts: DryRunRollback',
  'src/errors.ts: CodedError',
]);

test('every error class of src/ extends CodedError, the base with a stable code', () => {
  const plain = sources.flatMap(({ file, text }) => [...text.matchAll(/class (\w+)(?:<[^>]*>)? extends Error\b/g)].map((m) => `${file}: ${m[1]}`));
  assert.deepEqual(
    plain.filter((found) => !PLAIN_ERRORS.has(found)),
    [],
  );
});

test('every code an error class declares is in docs/errors.md', () => {
  const page = readFileSync(path.join(root, 'docs/errors.md'), 'utf8');
  const declared = new Set<string>();
  for (const { text } of sources) {
    // `readonly code = 'x'`, an InboxError's `super('x', 404, …)`, and the unions a constructor's code is typed by.
    for (const m of text.matchAll(/readonly code = '([a-z_]+)'/g)) declared.add(m[1]!);
    for (const m of text.matchAll(/super\('([a-z_]+)', \d{3}\b/g)) declared.add(m[1]!);
    for (const m of text.matchAll(/export type (?:SignatureFailure|EmbeddedDatabaseFailure) =([^;]+);/g))
      for (const code of m[1]!.matchAll(/'([a-z_]+)'/g)) declared.add(code[1]!);
    for (const m of text.matchAll(/readonly code: ('[a-z_]+'(?: \| '[a-z_]+')+);/g)) for (const code of m[1]!.matchAll(/'([a-z_]+)'/g)) declared.add(code[1]!);
    for (const m of text.matchAll(/new OperationRefusedError\(\s*'([a-z_]+)'/g)) declared.add(m[1]!);
  }
  assert.ok(declared.size >= 40, `found ${declared.size} codes: the patterns above still match the source`);
  const missing = [...declared].filter((code) => !page.includes(`\`${code}\``));
  assert.deepEqual(missing, [], 'codes not in docs/errors.md');
});
