import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';

const checkout = path.resolve(import.meta.dirname, '../..');

/**
 * Where src/ and bin/ may call JSON.parse itself, and why. Text from outside the process goes
 * through parseJsonText (src/format/json-parse.ts): Node 24's JSON.parse misreads some escaped keys
 * (nodejs/node#63785). A new call elsewhere fails this test until it is one or the other.
 */
const ALLOWED: Record<string, string> = {
  'src/format/json-parse.ts': 'the one careful parse: JSON.parse where no key holds an escape',
  'src/format/json-text.ts': 'only checks that the text is JSON; the value is dropped, the text laid out as written',
  'src/inbox/sql/event-columns.ts': 'the verification proof this service wrote: its own keys, none escaped',
  'src/operations/verify-events.ts': 'the verification proof this service wrote: its own keys, none escaped',
  'src/db/embedded-binaries.ts': "the embedded PostgreSQL package's own package.json",
  'src/db/embedded-location.ts': 'the location record this service wrote',
  'src/domain/payments/checkpoint.ts': 'the payment checkpoint this service wrote (encodeCheckpoint): its own keys, none escaped',
  'src/reconciliation/sql/findings.ts': "a finding's evidence this service wrote: its own keys, none escaped",
};

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(path.join(checkout, folder), { recursive: true });
  return entries.filter((entry) => entry.endsWith('.ts')).map((entry) => path.join(folder, entry));
}

test('JSON.parse is called only where ALLOWED says why; outside text goes through parseJsonText', async () => {
  const callers: string[] = [];
  for (const file of [...(await sourceFiles('src')), ...(await sourceFiles('bin'))]) {
    const code = (await readFile(path.join(checkout, file), 'utf8')).split('\n').filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line));
    if (code.some((line) => line.includes('JSON.parse('))) callers.push(file);
  }
  assert.deepEqual(callers.sort(), Object.keys(ALLOWED).sort());
});
