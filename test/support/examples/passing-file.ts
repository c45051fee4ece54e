// Run by test/support/keep-database.test.ts in a child `node --test`: every test passes.
import { test } from 'node:test';
import { useTestDatabase } from '../database.ts';

const database = useTestDatabase();

test('a passing test names its database', async () => {
  await database.sql`select 1`;
  console.log(`# using database ${database.name}`);
});
