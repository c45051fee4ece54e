import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectDatabase } from '../../src/db/client.ts';
import { useTestDatabase } from '../support/database.ts';

// Behind a transaction pooler (DATABASE_PREPARED_STATEMENTS=false) each connection sends one
// statement at a time (max_pipeline: 0, src/db/client.ts). postgres.js 3.4.9 unpatched then never
// gave sql.begin its connection: the transaction failed at its first statement with a TypeError
// and its BEGIN stayed open on a pooled connection, under whatever that connection ran next.
// The pooler itself is exercised in test/db/transaction-pooler.system.test.ts.

const database = useTestDatabase();

test('with the pooler settings, a transaction runs on its own connection and leaves none open behind it', async () => {
  const client = connectDatabase({ url: database.url, poolSize: 1, connectTimeoutSeconds: 5, applicationName: 'pooler-settings', preparedStatements: false });
  database.onTeardown(() => client.close());
  for (let round = 1; round <= 3; round += 1) {
    // Queued with the transaction on the pool's only connection: none may run inside it.
    const outside = client.sql<{ id: string | null }[]>`select txid_current_if_assigned()::text as id`;
    const ids = await client.sql.begin(async (tx) => {
      const [first] = await tx<{ id: string }[]>`select txid_current()::text as id`;
      const [second] = await tx<{ id: string }[]>`select txid_current_if_assigned()::text as id, ${round}::int as round`;
      return [first!.id, second!.id];
    });
    assert.equal(ids[0], ids[1], `round ${round}: both statements ran in the one transaction`);
    const [before] = await outside;
    assert.equal(before!.id, null, `round ${round}: the statement queued beside it ran outside the transaction`);
    const [after] = await client.sql<{ id: string | null }[]>`select txid_current_if_assigned()::text as id`;
    assert.equal(after!.id, null, `round ${round}: no transaction left open on the connection`);
  }
});
