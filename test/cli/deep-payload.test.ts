import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { prettyPayload } from '../../src/dashboard/views/event-page.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { daysAgo, insertInboxRows } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

// Nesting that JSON.stringify and a JSON.parse reviver cannot take (they recurse) but jsonb
// holds: 3,000 levels (as reported) and 10,000. The innermost number is beyond a double, so a
// round trip through JavaScript numbers would show.
const DEPTHS = [3000, 10_000];
const INNERMOST = '{"innermost": 12345678901234567890}';
const bodyOf = (depth: number) =>
  Buffer.from(`{"id": "evt_deep_${depth}", "type": "charge.succeeded", "data": ${'['.repeat(depth)}${INNERMOST}${']'.repeat(depth)}}`);

const database = useTestDatabase();
let archiveDir: string;
let env: Record<string, string>;

setup(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inboxctl-deep-'));
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_deep', INBOX_ARCHIVE_DIR: archiveDir };
  await insertInboxRows(
    database.sql,
    DEPTHS.map((depth) => ({
      eventId: `evt_deep_${depth}`,
      status: 'processed' as const,
      receivedAt: daysAgo(60),
      processedAt: daysAgo(60),
      rawBody: bodyOf(depth),
    })),
  );
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

/** How many arrays deep `value` goes along first elements, and what is at the bottom (a loop: the test must not recurse either). */
function descend(value: unknown): { depth: number; bottom: unknown } {
  let depth = 0;
  let bottom = value;
  while (Array.isArray(bottom)) {
    bottom = bottom[0];
    depth += 1;
  }
  return { depth, bottom };
}

describe('an event nested deeper than JavaScript recursion goes', () => {
  for (const depth of DEPTHS) {
    test(`show prints all ${depth.toLocaleString('en-US')} levels, the innermost number exact`, async () => {
      const run = await runInboxctl(['show', 'stripe', `evt_deep_${depth}`], env);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.out, /^ {2}payload\n {4}\{\n {6}"id": "evt_deep_\d+",\n/m, 'the outer levels indented one member a line');
      assert.ok(run.out.includes('"innermost":12345678901234567890'), 'the innermost level present, its digits as stored');
      assert.ok(run.out.length < 200_000, `output stays proportional to the payload (${run.out.length} characters)`);
    });

    test(`show --json of ${depth.toLocaleString('en-US')} levels is valid JSON with the whole payload`, async () => {
      const run = await runInboxctl(['show', 'stripe', `evt_deep_${depth}`, '--json'], env);
      assert.equal(run.code, 0, run.stderr);
      const event = run.json();
      assert.equal(event.eventId, `evt_deep_${depth}`);
      assert.deepEqual(descend(event.payload.data).depth, depth);
      assert.ok(run.out.includes('"innermost":12345678901234567890'));
      assert.ok(Buffer.from(event.rawBodyBase64, 'base64').equals(bodyOf(depth)));
    });
  }

  test('restore --print of an archive holding them prints every line whole', async () => {
    const purge = await runInboxctl(['purge', '--older-than', '40d', '--provider', 'stripe'], env);
    assert.equal(purge.code, 0, purge.stderr);
    const [file] = await readdir(path.join(archiveDir, 'stripe'));
    const run = await runInboxctl(['restore', '--print', path.join(archiveDir, 'stripe', file!)], env);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.out
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l) => descend(l.payload.data).depth).sort((a, b) => a - b),
      DEPTHS,
    );
    assert.deepEqual(lines.map((l) => l.raw_body).sort(), DEPTHS.map((d) => bodyOf(d).toString('utf8')).sort());
  });

  test("the dashboard's event page lays it out from the raw body the same way", () => {
    const pretty = prettyPayload({ rawBody: bodyOf(10_000), payloadJson: '{}' });
    assert.match(pretty, /^\{\n {2}"id": "evt_deep_10000",\n {2}"type": "charge.succeeded",\n {2}"data": \[\n/, 'in the order the gateway sent, indented');
    assert.ok(pretty.includes('"innermost":12345678901234567890'));
    assert.equal(descend(JSON.parse(pretty).data).depth, 10_000);
  });
});
