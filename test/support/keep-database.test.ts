import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import postgres from 'postgres';
import { databaseExists, dropDatabase } from './database.ts';
import { adminDatabaseUrl, databaseUrl } from './env.ts';

/** Runs one file in a child `node --test`, as the suite runs files, and returns its exit code and output. */
function runTestFile(file: string): Promise<{ code: number; output: string }> {
  // NODE_TEST_CONTEXT would make the child report to us in the runner's private protocol.
  const { NODE_TEST_CONTEXT: _ignored, ...env } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--test', '--test-reporter=spec', file], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

test('a file with a failing test keeps its database, prints its name, and the rows written are still there', async () => {
  const { code, output } = await runTestFile('test/support/examples/failing-file.ts');
  assert.notEqual(code, 0, output);
  const name = /# kept database (inbox_test_[0-9a-f]+) for inspection \(a test failed\)/.exec(output)?.[1];
  assert.ok(name, `the kept database's name is printed:\n${output}`);
  try {
    assert.equal(await databaseExists(name), true);
    const kept = postgres(databaseUrl(adminDatabaseUrl(), name), { max: 1, onnotice: () => {} });
    try {
      assert.deepEqual([...(await kept`select note from left_behind`)], [{ note: 'written before the failure' }]);
    } finally {
      await kept.end();
    }
  } finally {
    await dropDatabase(name);
  }
});

test('a file whose tests all pass drops its database and prints nothing about keeping it', async () => {
  const { code, output } = await runTestFile('test/support/examples/passing-file.ts');
  assert.equal(code, 0, output);
  assert.doesNotMatch(output, /kept database/);
  const name = /# using database (inbox_test_[0-9a-f]+)/.exec(output)?.[1];
  assert.ok(name, output);
  assert.equal(await databaseExists(name), false);
});
