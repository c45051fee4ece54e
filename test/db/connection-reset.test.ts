import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { connectDatabase } from '../../src/db/client.ts';
import { classifyDatabaseError } from '../../src/db/database-errors.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { settledWithin, waitFor } from '../support/wait.ts';

// A failover or a dropped NAT entry resets the connection (RST) under an open transaction.
// postgres.js 3.4.9 unpatched then answered one more query on that connection, hung the next ones
// and finally threw an uncaught TypeError (porsager/postgres#1208, #1215's "connection reset inside
// begin()"); the service lives on one small pool, so that is an outage that never ends. Checked
// here for the driver version package.json pins, through a TCP proxy that resets both sides.

const database = useTestDatabase();

interface ResettingProxy {
  url: string;
  resetAll(): void;
}

/** A TCP proxy in front of the test database whose open connections can be reset at once. */
async function startResettingProxy(target: URL): Promise<ResettingProxy> {
  const open = new Set<{ client: net.Socket; server: net.Socket }>();
  const proxy = net.createServer((client) => {
    const server = net.connect(Number(target.port || 5432), target.hostname);
    const pair = { client, server };
    open.add(pair);
    client.pipe(server).pipe(client);
    for (const socket of [client, server]) {
      socket.on('error', () => open.delete(pair));
      socket.on('close', () => open.delete(pair));
    }
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  database.onTeardown(() => new Promise((resolve) => proxy.close(resolve)));
  const url = new URL(target);
  url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
  return {
    url: url.toString(),
    resetAll() {
      for (const { client, server } of open) {
        client.resetAndDestroy();
        server.resetAndDestroy();
      }
    },
  };
}

let proxy: ResettingProxy;

/** The query's rows, or a failure naming it if it has not settled by a generous deadline: a pool stuck on a dead connection never answers. */
const settled = <T>(query: Promise<T>, what: string): Promise<T> =>
  settledWithin(query, 15_000, () => new Error(`${what} never settled (15 s): the pool is stuck on the reset connection`));

setup(async () => {
  proxy = await startResettingProxy(new URL(database.url));
});

test('a transaction whose connection is reset rejects as an outage, and the same one-connection pool answers every query after', {
  timeout: 60_000,
}, async () => {
  // The service's own client; one connection, so every query after the reset must reuse it.
  const client = connectDatabase({ url: proxy.url, poolSize: 1, connectTimeoutSeconds: 5, applicationName: 'reset-victim' });
  database.onTeardown(() => client.close());
  for (let round = 1; round <= 2; round += 1) {
    let pid: number | undefined;
    const transaction = client.sql.begin(async (tx) => {
      pid = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]?.pid;
      await tx`select pg_sleep(30)`;
    });
    const backend = await waitFor(() => pid, { message: `round ${round}: the transaction to report its backend`, timeoutMs: 10_000, intervalMs: 10 });
    proxy.resetAll();
    await assert.rejects(transaction, (error: { code?: string }) => {
      assert.equal(classifyDatabaseError(error), 'availability', `round ${round}: the reset is an outage (503), not a bug: ${error.code} ${String(error)}`);
      return true;
    });
    // Three, not one: 3.4.9 answered the first query after the reset and hung the second.
    for (const n of [1, 2, 3]) {
      const what = `round ${round}: query ${n} after the reset`;
      assert.deepEqual([...(await settled(client.sql`select ${n}::int as n`, what))], [{ n }], what);
    }
    // The reset backend sleeps on, unaware: end it, so the database can be dropped at once.
    await database.sql`select pg_terminate_backend(${backend})`;
  }
});
