/**
 * The service's node flags live in package.json's `start` script, and the Dockerfile's CMD repeats
 * them (a container does not run npm); the bench reads them from `start` with the same reader
 * (bench/support/services.ts). Here the two copies are held equal.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startScriptNodeFlags } from '../../bench/support/services.ts';
import { repoRoot } from '../cli/run-inboxctl.ts';

test('the Dockerfile runs the service with the node flags of npm start', () => {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8'))?.[1];
  assert.ok(cmd, 'the Dockerfile has no CMD in exec form');
  assert.deepEqual(JSON.parse(cmd), ['node', ...startScriptNodeFlags(), 'src/main.ts']);
});
