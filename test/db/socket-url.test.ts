import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { postgresJsConnection } from '../../src/db/socket-url.ts';
import { startPrivateCluster } from '../fault/support/private-cluster.ts';
import type { TestDatabase } from '../support/database.ts';
import { startTestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_socket_url_test';

describe("libpq's ?host=/socket/dir in DATABASE_URL", () => {
  test('postgres.js gets the socket path as its own option, and the URL keeps everything else', () => {
    assert.deepEqual(postgresJsConnection('postgres://app@localhost:6543/inbox?host=/run/postgresql/&sslmode=disable'), {
      url: 'postgres://app@localhost:6543/inbox?sslmode=disable',
      path: '/run/postgresql/.s.PGSQL.6543',
    });
    assert.deepEqual(postgresJsConnection('postgres://app@localhost/inbox?host=/cloudsql/p:r:i'), {
      url: 'postgres://app@localhost/inbox',
      path: '/cloudsql/p:r:i/.s.PGSQL.5432',
    });
    for (const url of ['postgres://app@db.internal:5432/inbox', 'postgres://app@localhost/inbox?host=db.internal'])
      assert.deepEqual(postgresJsConnection(url), { url });
  });

  // The suite's own server listens on TCP only: this test starts a cluster that also has a socket.
  test('the service migrates, stores and processes through the socket: every connection of its pools is a unix one', async (t) => {
    const cluster = await startPrivateCluster();
    const teardown: (() => Promise<unknown> | void)[] = [];
    t.after(async () => {
      for (const close of teardown.reverse()) await close();
      await cluster.destroy();
    });
    const admin = postgres(cluster.url, { max: 1, onnotice: () => {} });
    teardown.push(() => admin.end());
    await admin`create database socket_test`;
    const sql = postgres(cluster.urlFor('socket_test'), { max: 1, onnotice: () => {} });
    teardown.push(() => sql.end());
    const url = `postgres://postgres@localhost:${cluster.port}/socket_test?host=${path.dirname(cluster.dataDir)}`;
    const database = {
      url,
      name: 'socket_test',
      sql,
      onTeardown: (close) => void teardown.push(close),
      connect: () => assert.fail('not used'),
    } satisfies TestDatabase;
    const service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET } });
    const response = await postStripe(
      service.baseUrl,
      chargeEvent({ id: 'evt_socket_1', type: 'charge.succeeded', chargeId: 'ch_socket_1', created: 1_767_225_600 }),
      SECRET,
    );
    assert.equal(response.status, 200);
    await waitFor(
      async () => {
        const [row] = await sql`select status from webhook_inbox where event_id = 'evt_socket_1'`;
        return row?.status === 'processed';
      },
      { message: 'the event processed' },
    );
    const connections = await sql<{ application_name: string; unix: boolean }[]>`
      select application_name, client_addr is null as unix from pg_stat_activity
      where datname = current_database() and application_name like 'webhook-inbox:%'`;
    // Its own pool, the group commit's and pg-boss's.
    assert.deepEqual(
      new Set(connections.map((c) => c.application_name)),
      new Set(['webhook-inbox:all', 'webhook-inbox:all:ingest', 'webhook-inbox:pg-boss']),
      JSON.stringify(connections),
    );
    assert.deepEqual(
      connections.filter((c) => !c.unix).map((c) => c.application_name),
      [],
      'no connection over TCP',
    );
  });
});
