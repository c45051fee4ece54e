import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { distinctChargeEvents } from '../fault/support/deliveries.ts';
import { deliverAll } from '../fault/support/gateway.ts';
import { DeliveryHistory, checkHistory, summarize } from '../fault/support/history.ts';
import { countUnfinished, readEffects, readStoredState } from '../fault/support/inbox-state.ts';
import { freePort } from '../fault/support/private-cluster.ts';
import { type ServiceProcess, spawnService } from '../fault/support/service-process.ts';
import { connectPool } from '../../src/db/client.ts';
import { adminDatabaseUrl, databaseUrl } from '../support/env.ts';
import { type PgBouncer, findPgBouncer, startPgBouncer, supportsPreparedStatements } from '../support/pgbouncer.ts';
import { chargeEvent } from '../support/stripe.ts';
import { settledWithin, waitFor } from '../support/wait.ts';

/**
 * The service, its workers and inboxctl through a real PgBouncer in transaction mode: a server
 * session belongs to a client for one transaction only, so nothing may rely on a session (named
 * prepared statements, LISTEN, session advisory locks). Each mode gets an EMPTY database, migrated
 * by two instances starting at once through the pooler.
 */
const SECRET = 'whsec_transaction_pooler_secret';
/** Server connections PgBouncer may open to the database: fewer than the two instances' pools ask for. */
const SERVER_POOL_SIZE = 6;
const binary = findPgBouncer();
const journal = JSON.parse(readFileSync(new URL('../../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] };

interface PoolerMode {
  name: string;
  /** DATABASE_PREPARED_STATEMENTS for the service and inboxctl. */
  preparedStatements: boolean;
  maxPreparedStatements?: number;
  skip: string | false;
}

const modes: PoolerMode[] = [
  {
    name: 'prepared statements off (DATABASE_PREPARED_STATEMENTS=false)',
    preparedStatements: false,
    skip: binary ? false : 'pgbouncer is not installed (Debian: apt-get install pgbouncer, or run .ci/ensure-test-packages.sh)',
  },
  {
    name: 'max_prepared_statements = 200, prepared statements on',
    preparedStatements: true,
    maxPreparedStatements: 200,
    skip: !binary
      ? 'pgbouncer is not installed'
      : supportsPreparedStatements(binary)
        ? false
        : `PgBouncer ${binary.version.join('.')} has no max_prepared_statements (added in 1.21): only DATABASE_PREPARED_STATEMENTS=false works through it`,
  },
];

for (const mode of modes) {
  describe(`through PgBouncer in transaction mode, ${mode.name}`, { skip: mode.skip }, () => {
    const name = `inbox_pooler_${Math.random().toString(16).slice(2, 10)}`;
    const admin = () => postgres(adminDatabaseUrl(), { max: 1, onnotice: () => {} });
    let direct: postgres.Sql;
    let bouncer: PgBouncer;
    let instances: ServiceProcess[] = [];
    let env: Record<string, string>;

    before(async () => {
      const server = admin();
      // Empty, not a clone of the migrated template: the instances below migrate it.
      await server.unsafe(`create database "${name}"`);
      await server.end();
      direct = postgres(databaseUrl(adminDatabaseUrl(), name), { max: 2, onnotice: () => {}, connection: { application_name: 'pooler-test-direct' } });
      bouncer = await startPgBouncer({
        binary: binary!,
        upstream: adminDatabaseUrl(),
        poolSize: SERVER_POOL_SIZE,
        maxPreparedStatements: mode.maxPreparedStatements,
      });
      env = {
        DATABASE_URL: bouncer.urlFor(name),
        DATABASE_PREPARED_STATEMENTS: String(mode.preparedStatements),
        DATABASE_LISTEN_NOTIFY: 'false',
        WEBHOOK_SECRET_STRIPE: SECRET,
      };
      const serviceEnv = { ...env, INBOX_ROLE: 'all', WORKER_POLLING_INTERVAL_SECONDS: '0.5', DATABASE_POOL_SIZE: '8' };
      // At once: both run our migrations and pg-boss's against the same empty database.
      instances = await Promise.all([0, 1].map(async () => spawnService({ port: await freePort(), env: serviceEnv })));
    });

    after(async () => {
      await Promise.all(instances.map((instance) => instance.stop()));
      await bouncer?.stop();
      await direct?.end({ timeout: 5 });
      const server = admin();
      await server.unsafe(`drop database if exists "${name}" with (force)`);
      await server.end();
    });

    test('two instances starting at once through the pooler migrate the empty database exactly once', async () => {
      const applied = await direct<{ hash: string }[]>`select hash from drizzle.__drizzle_migrations`;
      assert.equal(applied.length, journal.entries.length, 'every migration recorded once');
      assert.equal(new Set(applied.map((row) => row.hash)).size, applied.length);
      const [queue] = await direct`select name from pgboss.queue where name = 'webhooks'`;
      assert.ok(queue, 'pg-boss migrated its schema and the queue exists');
    });

    test('statements queued on one pooled connection each get their answer (none is sent before the last one ends)', async () => {
      // One connection, twenty statements at once: postgres.js pipelines them unless told not to,
      // and PgBouncer then loses a Describe's answer and the statement waits forever (inboxctl
      // stats hung this way). A timeout turns that hang into this test's failure.
      const pool = connectPool({
        url: env.DATABASE_URL!,
        poolSize: 1,
        connectTimeoutSeconds: 5,
        applicationName: 'pooler-test-pipeline',
        preparedStatements: mode.preparedStatements,
      });
      try {
        // A statement without parameters goes out whole (Parse/Bind/Execute/Sync); one with parameters
        // first asks for its types (Parse/Describe/Flush). The second sent behind the first is the case.
        const statement = (i: number) => (i % 2 === 0 ? pool.unsafe<{ n: number }[]>(`select ${i}::int as n`) : pool<{ n: number }[]>`select ${i}::int as n`);
        const answers = Promise.all(Array.from({ length: 20 }, (_, i) => statement(i)));
        const rows = await settledWithin(answers, 10_000, () => new Error(`no answer within 10 s; PgBouncer said:\n${bouncer.output().slice(-2000)}`));
        assert.deepEqual(
          rows.map(([row]) => row!.n),
          Array.from({ length: 20 }, (_, i) => i),
        );
      } finally {
        await pool.end({ timeout: 1 });
      }
    });

    test('signed deliveries to both instances all get 200, and each is processed once', async (t) => {
      const history = new DeliveryHistory();
      const prefix = 'evt_pooler_';
      const events = distinctChargeEvents(prefix, 150);
      // Every tenth event sent again: a gateway's duplicate, answered 200 and never applied twice.
      const deliveries = [...events, ...events.filter((_, i) => i % 10 === 0)];
      await deliverAll(deliveries, {
        baseUrl: (eventId, attempt) => instances[(eventId.length + attempt) % 2]!.baseUrl,
        secret: SECRET,
        history,
        concurrency: 16,
      });
      await waitFor(async () => (await countUnfinished(direct, prefix)) === 0, {
        message: 'every delivered event to be processed',
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      const state = { ...(await readStoredState(direct, prefix)), effects: await readEffects(direct, prefix) };
      const result = checkHistory(history, state, { allowedStatuses: [200], requireProcessedOnce: true });
      t.diagnostic(summarize('through the pooler', result));
      assert.equal(result.acknowledged, events.length);
      assert.equal(history.attempts.filter((a) => a.outcome !== 200).length, 0, `every attempt answered 200: ${JSON.stringify(result.outcomes)}`);
      assert.deepEqual(result.lost, []);
      assert.deepEqual(result.duplicated, []);
      assert.deepEqual(result.unexpected, []);

      // The instances' pools (8 + 4 each) were multiplexed onto the pooler's server connections.
      const [sessions] = await direct<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and backend_type = 'client backend' and application_name <> 'pooler-test-direct'`;
      t.diagnostic(`server sessions on the database: ${sessions!.n} (pooler limit ${SERVER_POOL_SIZE})`);
      assert.ok(sessions!.n <= SERVER_POOL_SIZE, `${sessions!.n} server sessions: the instances bypassed the pooler`);
    });

    test('inboxctl stats and replay work through the pooler, and the replayed events are processed again', async () => {
      const prefix = 'evt_pooler_updated_';
      const created = Math.floor(Date.now() / 1000);
      // No handler knows charge.updated: the events end `ignored`, which replay may take back.
      const updates = Array.from({ length: 3 }, (_, i) => {
        const eventId = `${prefix}${i}`;
        return { eventId, body: chargeEvent({ id: eventId, type: 'charge.updated', chargeId: `ch_${eventId}`, created }) };
      });
      await deliverAll(updates, { baseUrl: () => instances[0]!.baseUrl, secret: SECRET, history: new DeliveryHistory(), concurrency: 3 });
      const ignoredOnce = async () => {
        const rows = await direct<{ status: string; attempts: number }[]>`select status, attempts from webhook_inbox where event_id like ${`${prefix}%`}`;
        return rows.length === 3 && rows.every((r) => r.status === 'ignored') ? rows : undefined;
      };
      await waitFor(ignoredOnce, { message: 'the charge.updated events to end ignored', timeoutMs: 30_000, intervalMs: 100 });

      const stats = await runInboxctl(['stats', '--since', 'all', '--json'], env);
      assert.equal(stats.code, 0, stats.stderr);
      const totals = stats.json().totals;
      assert.equal(totals.ignored, 3);
      assert.equal(totals.pending, 0);

      const replay = await runInboxctl(['replay', 'stripe', '--status', 'ignored', '--json'], env);
      assert.equal(replay.code, 0, replay.stderr);
      assert.equal(replay.json().replayed, 3);
      await waitFor(
        async () => {
          const rows = await ignoredOnce();
          return rows?.every((r) => r.attempts === 2);
        },
        { message: 'the replayed events to be processed again (a second attempt, ignored again)', timeoutMs: 30_000, intervalMs: 100 },
      );
    });
  });
}
