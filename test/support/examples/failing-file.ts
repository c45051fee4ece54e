// Run by test/support/keep-database.test.ts in a child `node --test`: one test fails on purpose.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../database.ts';

const database = useTestDatabase();

test('a passing test writes a row', async () => {
  await database.sql`create table left_behind (note text)`;
  await database.sql`insert into left_behind values ('written before the failure')`;
});

describe('a group', () => {
  test('a failing test', () => {
    assert.fail('failing on purpose');
  });
});
