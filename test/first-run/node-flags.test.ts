/**
 * The service's node flags live in package.json's `start` script, and the Dockerfile's CMD repeats
 * them (a container does not run npm); the bench reads them from `start` (bench/support/services.ts).
 * Here the two copies are held equal.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../cli/run-inboxctl.ts';

test('the Dockerfile runs the service with the node flags of npm start', () => {
  const { scripts } = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const fromStart = /\bnode((?:\s+--\S+)*)\s+src\/main\.ts/.exec(scripts.start)?.[1]?.trim().split(/\s+/).filter(Boolean);
  assert.ok(fromStart, `package.json's start script does not run node … src/main.ts: ${scripts.start}`);
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'))?.[1];
  assert.ok(cmd, 'the Dockerfile has no CMD in exec form');
  assert.deepEqual(JSON.parse(cmd), ['node', ...fromStart, 'src/main.ts']);
});
