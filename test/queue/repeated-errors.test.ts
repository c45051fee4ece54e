import assert from 'node:assert/strict';
import { test } from 'node:test';
import { collapseRepeatedErrors } from '../../src/queue/repeated-errors.ts';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

test("an outage's pg-boss errors, five a second for ten seconds: the first is logged at once, then one per interval with how many were not", () => {
  let now = 0;
  const lines: { code: unknown; repeated: number }[] = [];
  const report = collapseRepeatedErrors({
    intervalMs: 30_000,
    now: () => now,
    log: (error, repeated) => lines.push({ code: (error as { code?: unknown }).code, repeated }),
  });
  for (; now < 10_000; now += 200) report(refused());
  assert.deepEqual(lines, [{ code: 'ECONNREFUSED', repeated: 0 }]);
  now = 30_000;
  report(refused());
  assert.deepEqual(lines.at(-1), { code: 'ECONNREFUSED', repeated: 49 });
});

test('another kind of error is logged at once, whatever the first kind is doing', () => {
  const lines: string[] = [];
  const report = collapseRepeatedErrors({ intervalMs: 30_000, now: () => 0, log: (error) => lines.push((error as Error).message) });
  report(refused());
  report(refused());
  report(new Error('Connection terminated unexpectedly'));
  report(new Error('Connection terminated unexpectedly'));
  assert.deepEqual(lines, ['connect ECONNREFUSED 127.0.0.1:5432', 'Connection terminated unexpectedly']);
});
