import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { drizzle } from 'drizzle-orm/postgres-js';
import { PgBoss } from 'pg-boss';
import postgres from 'postgres';
import * as schema from '../../src/db/schema.ts';
import { createMetricsRoute } from '../../src/http/metrics-route.ts';
import { createLogger } from '../../src/logger.ts';
import { GaugeRefresher, type QueueCounts } from '../../src/operations/gauge-refresher.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { sampleValue } from './prometheus-text.ts';

const database = useTestDatabase();
let client: postgres.Sql;
const queries: { text: string; params: unknown[] }[] = [];

/** Rows straight into the table: `age` is how long before now() each was received. */
async function insertRows(provider: string, status: string, ages: string[]) {
  for (const age of ages) {
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, processed_at)
      values (${provider}, ${`evt_${provider}_${status}_${Math.random().toString(36).slice(2)}`}, 'charge.succeeded', 'ch_1', '{}'::jsonb, '\\x7b7d'::bytea,
              now() - ${age}::interval, now() - ${age}::interval, ${status},
              case when ${status} in ('processed', 'ignored') then now() - ${age}::interval + interval '2 seconds' end)`;
  }
}

const fixedQueueCounts: QueueCounts = {
  getQueue: async (name) => (name === WEBHOOKS_QUEUE ? { queuedCount: 7, readyCount: 5, deferredCount: 2, activeCount: 1, failedCount: 3 } : null),
};

setup(async () => {
  // Three days of settled history the gauges must not read, plus a known recent picture.
  await database.sql`
    insert into webhook_inbox (provider, event_id, event_type, payload, raw_body, occurred_at, received_at, status, processed_at)
    select 'stripe', 'evt_old_' || n, 'charge.succeeded', '{}'::jsonb, '\\x7b7d'::bytea,
           now() - interval '3 days' - n * interval '1 second', now() - interval '3 days' - n * interval '1 second',
           case when n % 10 = 0 then 'ignored' else 'processed' end, now() - interval '3 days'
    from generate_series(1, 20000) as n`;
  await insertRows('stripe', 'pending', ['20 minutes', '5 minutes', '1 minute']);
  await insertRows('stripe', 'failed', ['2 hours', '10 minutes']);
  await insertRows('stripe', 'processed', ['50 minutes', '40 minutes', '30 minutes', '2 minutes', '1 minute']);
  await insertRows('stripe', 'ignored', ['15 minutes']);
  await insertRows('asaas', 'pending', ['90 seconds']);
  await insertRows('asaas', 'ignored', ['3 minutes', '4 minutes']);
  // Backfilled rows (listed from the gateway's API) are not deliveries: the newest asaas
  // delivery stays the one of 90 seconds ago.
  await database.sql`
    insert into webhook_inbox (provider, event_id, event_type, payload, raw_body, occurred_at, received_at, status, source)
    values ('asaas', 'evt_asaas_backfilled', 'PAYMENT_RECEIVED', '{}'::jsonb, '\\x7b7d'::bytea, now() - interval '1 day', now() - interval '10 seconds', 'processed', 'backfill')`;
  await database.sql`analyze webhook_inbox`;
  client = postgres(database.url, { max: 2, onnotice: () => {} });
  database.onTeardown(() => client.end());
});

function refresherFor(metrics: ReturnType<typeof createMetrics>, boss: QueueCounts = fixedQueueCounts) {
  const db = drizzle(client, { schema, logger: { logQuery: (text, params) => queries.push({ text, params }) } });
  return new GaugeRefresher({
    db,
    boss,
    queues: [WEBHOOKS_QUEUE, 'webhooks-dead-letter'],
    gauges: metrics.gauges,
    providers: () => ['stripe', 'asaas', 'pagarme'],
    intervalMs: 60_000,
    logger: createLogger('silent'),
  });
}

describe('database-derived gauges', () => {
  test('reflect a known fixture: backlog by provider × status, the last hour, oldest pending, queue depth', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    await refresherFor(metrics).refresh();
    const text = await metrics.registry.metrics();
    const value = (name: string, labels: Record<string, string>) => sampleValue(text, name, labels);

    assert.equal(value('inbox_events', { provider: 'stripe', status: 'pending' }), 3);
    assert.equal(value('inbox_events', { provider: 'stripe', status: 'failed' }), 2);
    assert.equal(value('inbox_events', { provider: 'asaas', status: 'pending' }), 1);
    assert.equal(value('inbox_events', { provider: 'asaas', status: 'failed' }), 0);
    assert.equal(value('inbox_events', { provider: 'pagarme', status: 'pending' }), 0, 'a configured provider without rows still has a series');

    assert.equal(value('inbox_events_received_last_hour', { provider: 'stripe', status: 'processed' }), 5);
    assert.equal(value('inbox_events_received_last_hour', { provider: 'stripe', status: 'ignored' }), 1);
    assert.equal(value('inbox_events_received_last_hour', { provider: 'stripe', status: 'pending' }), 3);
    assert.equal(value('inbox_events_received_last_hour', { provider: 'stripe', status: 'failed' }), 1, 'the 2-hour-old failure is outside the hour');
    assert.equal(value('inbox_events_received_last_hour', { provider: 'asaas', status: 'ignored' }), 2);

    const stripeAge = value('inbox_oldest_pending_age_seconds', { provider: 'stripe' })!;
    assert.ok(stripeAge >= 1200 && stripeAge < 1260, `stripe's oldest pending is 20 minutes old, got ${stripeAge}`);
    const asaasAge = value('inbox_oldest_pending_age_seconds', { provider: 'asaas' })!;
    assert.ok(asaasAge >= 90 && asaasAge < 150, `asaas's oldest pending is 90 s old, got ${asaasAge}`);
    assert.equal(value('inbox_oldest_pending_age_seconds', { provider: 'pagarme' }), 0);

    const secondsSince = (provider: string) => Date.now() / 1000 - value('inbox_last_webhook_request_timestamp_seconds', { provider })!;
    assert.ok(secondsSince('stripe') >= 60 && secondsSince('stripe') < 120, `stripe's newest webhook request is 1 minute old, got ${secondsSince('stripe')}`);
    assert.ok(
      secondsSince('asaas') >= 90 && secondsSince('asaas') < 150,
      `asaas's newest webhook request is 90 s old (the backfilled row does not count), got ${secondsSince('asaas')}`,
    );
    assert.equal(value('inbox_last_webhook_request_timestamp_seconds', { provider: 'pagarme' }), undefined, 'no webhook request ever: no series');
    // Its name before the rename, emitted too for one release: the same series.
    for (const provider of ['stripe', 'asaas', 'pagarme'])
      assert.equal(value('inbox_last_delivery_timestamp_seconds', { provider }), value('inbox_last_webhook_request_timestamp_seconds', { provider }), provider);

    assert.equal(value('pgboss_queue_jobs', { queue: 'webhooks', state: 'queued' }), 7);
    assert.equal(value('pgboss_queue_jobs', { queue: 'webhooks', state: 'active' }), 1);
    assert.equal(value('pgboss_queue_jobs', { queue: 'webhooks', state: 'failed' }), 3);
    assert.ok((value('inbox_metrics_refreshed_timestamp_seconds', {}) ?? 0) > 0);
  });

  test('scraping reads memory only: twenty scrapes run no query', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    queries.length = 0;
    await refresherFor(metrics).refresh();
    const perRefresh = queries.length;
    assert.equal(
      perRefresh,
      7,
      "one backlog query, one last-hour query, one last-delivery query, one lanes query, and reconciliation's open findings, last complete runs and incomplete accounts, per refresh",
    );
    const route = createMetricsRoute({ registry: metrics.registry });
    for (let i = 0; i < 20; i++) assert.equal((await route.request('/metrics')).status, 200);
    assert.equal(queries.length, perRefresh);
  });

  test('the refresh queries walk an index, never the table: the counts read only the (status, received_at, provider) one, the last delivery the partial (provider, received_at) one', async () => {
    // Vacuumed, as autovacuum keeps a table: a count that has to visit the heap for each row's
    // provider costs a page per few rows of the backlog and of the last hour, every refresh.
    await client`vacuum analyze webhook_inbox`;
    const metrics = createMetrics({ defaultMetrics: false });
    queries.length = 0;
    await refresherFor(metrics).refresh();
    const inboxQueries = queries.filter(({ text }) => text.includes('webhook_inbox'));
    assert.equal(inboxQueries.length, 3);
    // webhook_inbox is partitioned by month: an empty partition (the default, a month ahead) is rightly scanned, for nothing.
    const holding = (await client`select distinct tableoid::regclass::text as partition from webhook_inbox`).map((r) => r.partition as string);
    assert.ok(holding.length > 0);
    for (const { text, params } of inboxQueries) {
      const plan = (await client.unsafe(`explain ${text}`, params as postgres.ParameterOrJSON<never>[])).map((r) => r['QUERY PLAN']).join('\n');
      for (const partition of holding) assert.doesNotMatch(plan, new RegExp(`Seq Scan on ${partition}\\b`), plan);
      assert.match(
        plan,
        text.includes("source = 'webhook'")
          ? /Index (Only )?Scan Backward using webhook_inbox_\S*(last_delivery|source|provider_received_at)\S*idx/
          : /Index Only Scan using webhook_inbox_(p\d{4}_\d{2}_|default_)?status_received_at\S*_idx/,
        plan,
      );
    }
  });

  test("reads queue depth from pg-boss's own counts", async () => {
    const boss = new PgBoss({ connectionString: database.url, max: 2, supervise: false, schedule: false });
    await boss.start();
    try {
      const metrics = createMetrics({ defaultMetrics: false });
      await refresherFor(metrics, boss).refresh();
      const text = await metrics.registry.metrics();
      for (const state of ['queued', 'ready', 'deferred', 'active', 'failed']) {
        for (const queue of ['webhooks', 'webhooks-dead-letter']) {
          assert.equal(typeof sampleValue(text, 'pgboss_queue_jobs', { queue, state }), 'number', `${queue} ${state}`);
        }
      }
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
  });
});
