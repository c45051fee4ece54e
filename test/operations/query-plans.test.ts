import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { drizzle } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import { type Database, type SqlExecutor, postgresExecutor } from '../../src/db/client.ts';
import { createMonthPartitionsAhead, monthPartition } from '../../src/db/inbox-partitions.ts';
import * as schema from '../../src/db/schema.ts';
import type { IncomingEvent } from '../../src/inbox/incoming-event.ts';
import { lockExpiredBatch } from '../../src/inbox/sql/archive-rows.ts';
import { selectStoredEventsOfOtherFingerprint } from '../../src/inbox/sql/conflicts.ts';
import { countByProviderAndStatus, listStoredProviders, oldestPendingByProvider } from '../../src/inbox/sql/counts.ts';
import { countDecisionsByProvider } from '../../src/inbox/sql/decision-counts.ts';
import { countFailedByErrorShape } from '../../src/inbox/sql/failed-events.ts';
import { type EventListFilter, findEventsPage } from '../../src/inbox/sql/event-list.ts';
import { findEventById, findEventByKey } from '../../src/inbox/sql/find-events.ts';
import { sampleSettledLag, settledLagByProvider } from '../../src/inbox/sql/lag.ts';
import { findLastWebhookRequests } from '../../src/inbox/sql/last-webhook-request.ts';
import { selectPartitionRows } from '../../src/inbox/sql/partition-rows.ts';
import { findReplayCandidates, findStalePendingEvents } from '../../src/inbox/sql/pending-events.ts';
import { findVerifiableEventsSince } from '../../src/inbox/sql/verifiable-events.ts';
import { refreshedGauges } from '../support/gauges.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';

// Plans are the planner's choice for a table of this size and shape; at a few hundred rows it
// would rightly scan. 60,000 rows over 60 days, mostly processed, as in production.
const ROWS = 60_000;
const database = useTestDatabase();
let db: SqlExecutor;
const recorded: Array<{ sql: string; params: unknown[] }> = [];
/** The partitions that hold rows: an empty one (the default, a month ahead) is rightly scanned, for nothing. */
const partitionsWithRows = new Set<string>();

setup(async () => {
  // The months of the data get their partitions, as the migration makes them for an existing inbox.
  await database.sql.begin((tx) => createMonthPartitionsAhead(postgresExecutor(tx), new Date(Date.now() - 62 * 86_400_000), 3));
  await database.sql.unsafe(`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, last_error, processed_at)
    select (array['stripe','asaas','pagarme'])[1 + g % 3], 'evt_' || g, 'charge.succeeded', 'ch_' || (g / 3), '{}', '\\x7b7d',
      now() - interval '60 days' * (g::float8 / ${ROWS}), now() - interval '60 days' * (g::float8 / ${ROWS}),
      case when g % 500 = 0 then 'failed' when g % 500 = 1 then 'pending' when g % 100 < 8 then 'ignored' else 'processed' end,
      case when g % 500 = 0 then 'boom' end, now() - interval '60 days' * (g::float8 / ${ROWS})
    from generate_series(1, ${ROWS}) g`);
  await database.sql`insert into webhook_event_keys (provider, event_id, fingerprint, received_at) select provider, event_id, fingerprint, received_at from webhook_inbox`;
  await database.sql`analyze webhook_inbox`;
  await database.sql`analyze webhook_event_keys`;
  const holding = await database.sql`select tableoid::regclass::text as partition from webhook_inbox group by 1`;
  for (const { partition } of holding) partitionsWithRows.add(partition);
  db = recording(database.sql);
});

/** The inbox's statements, exactly as they send them, captured on their way through the one executor interface. */
function recording(client: Pick<postgres.ISql, 'unsafe'>): SqlExecutor {
  const executor = postgresExecutor(client);
  return {
    executeSql(text, values = []) {
      recorded.push({ sql: text, params: values });
      return executor.executeSql(text, values);
    },
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** Runs `work`, then EXPLAINs every statement it sent and returns the plan nodes that touch webhook_inbox. */
async function inboxPlanOf(work: () => Promise<unknown>): Promise<PlanNode[]> {
  recorded.length = 0;
  await work().catch((error) => {
    if (!(error instanceof Rollback)) throw error;
  });
  const touched: PlanNode[] = [];
  for (const { sql, params } of recorded) {
    if (!/webhook_inbox/.test(sql)) continue;
    const [row] = await database.sql.unsafe(`explain (format json) ${sql}`, params as never[]);
    // A bitmap index scan names only its index; its heap scan names the table (a partition of it).
    touched.push(...nodes(row!['QUERY PLAN'][0].Plan).filter((n) => isInboxRelation(n['Relation Name']) || INBOX_INDEX.test(n['Index Name'] ?? '')));
  }
  assert.ok(touched.length > 0, 'the work queried webhook_inbox');
  return touched;
}

interface AnalyzedNode extends PlanNode {
  'Actual Loops': number;
  Plans?: AnalyzedNode[];
}

/**
 * Runs `work`, then EXPLAIN ANALYZE of every statement it sent (or of those `statement` picks): the
 * plan nodes that actually ran (a partition pruned at run time, per outer row, shows 0 loops; plain
 * EXPLAIN lists it all the same).
 */
async function executedInboxNodesOf(work: () => Promise<unknown>, statement: (sql: string) => boolean = () => true): Promise<AnalyzedNode[]> {
  recorded.length = 0;
  await work();
  const ran: AnalyzedNode[] = [];
  for (const { sql, params } of recorded.filter(({ sql }) => statement(sql))) {
    const [row] = await database.sql.unsafe(`explain (analyze, buffers, format json) ${sql}`, params as never[]);
    const all = nodes(row!['QUERY PLAN'][0].Plan) as AnalyzedNode[];
    ran.push(...all.filter((n) => n['Actual Loops'] > 0 && (isInboxRelation(n['Relation Name']) || INBOX_INDEX.test(n['Index Name'] ?? ''))));
  }
  assert.ok(ran.length > 0, 'the work read webhook_inbox');
  return ran;
}

class Rollback extends Error {}

// webhook_inbox is partitioned by month: plans name its partitions and their indexes, each named
// after the partition and the parent index (webhook_inbox_p2026_12_status_received_at_provider_idx).
const PARTITION = /^webhook_inbox_(p\d{4}_\d{2}|default)$/;
const INBOX_INDEX = /^webhook_inbox_(p\d{4}_\d{2}_|default_)?(pkey|status_received_at_provider_idx|provider_event_id_idx|provider_resource_id_idx)$/;
const isInboxRelation = (name: string | undefined) => name === 'webhook_inbox' || PARTITION.test(name ?? '');

/** The index on the parent, as each partition names its own copy of it. */
const onPartition = (index: string, name: string) => name === index || name.replace(/^webhook_inbox_(p\d{4}_\d{2}|default)_/, 'webhook_inbox_') === index;

/** `wholeWindow`: a partition the query's time window covers for the most part, which is rightly read whole. */
function assertIndexOnly(touched: PlanNode[], index: string, wholeWindow?: string) {
  const scanned = touched.filter(
    (n) => n['Node Type'] === 'Seq Scan' && partitionsWithRows.has(n['Relation Name'] ?? '') && n['Relation Name'] !== wholeWindow,
  );
  assert.deepEqual(
    scanned.map((n) => n['Relation Name']),
    [],
    'no sequential scan of a partition of webhook_inbox that holds rows',
  );
  const readWhole = touched.some((n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === wholeWindow);
  assert.ok(
    readWhole || touched.some((n) => onPartition(index, n['Index Name'] ?? '')),
    `uses ${index}; plan: ${JSON.stringify(touched.map((n) => [n['Node Type'], n['Index Name']]))}`,
  );
}

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000);

/** A month partition (or one of its indexes) whose month ended by `since`: nothing in it can be in a window from `since`. */
const monthEndedBy = (since: Date) => (name: string | undefined) => {
  const month = /^webhook_inbox_p(\d{4})_(\d{2})(_|$)/.exec(name ?? '');
  return month !== null && Date.UTC(Number(month[1]), Number(month[2]), 1) <= since.getTime();
};

describe('operations read webhook_inbox through its indexes (EXPLAIN on 60,000 rows)', () => {
  test('the sweeper: pending and older than 5 minutes, oldest first', async () => {
    assertIndexOnly(await inboxPlanOf(() => findStalePendingEvents(db, new Date(Date.now() - 300_000), 500)), 'webhook_inbox_status_received_at_provider_idx');
  });

  test('a retention batch: one provider, one status, before the cut-off', async () => {
    const work = () =>
      database.sql.begin(async (tx) => {
        await lockExpiredBatch(recording(tx), 'stripe', 'processed', hoursAgo(30 * 24), undefined, 500);
        throw new Rollback();
      });
    assertIndexOnly(await inboxPlanOf(work), 'webhook_inbox_status_received_at_provider_idx');
  });

  test("a month's retention reads its partition along the primary key, a batch at a time", async () => {
    const month = monthPartition(hoursAgo(40 * 24)).name;
    assert.ok(partitionsWithRows.has(month), `${month} holds rows`);
    assertIndexOnly(await inboxPlanOf(() => selectPartitionRows(db, month, 0, 5_000)), 'webhook_inbox_pkey');
  });

  test('inboxctl verify --since: a page walks the primary key from the last id, it does not sort the window', async () => {
    const plan = await inboxPlanOf(() => findVerifiableEventsSince(db, { since: hoursAgo(20 * 24), afterId: 0, limit: 100 }));
    assertIndexOnly(plan, 'webhook_inbox_pkey');
    assert.ok(
      !plan.some((n) => n['Node Type'] === 'Sort'),
      `no Sort of the window; plan: ${JSON.stringify(plan.map((n) => [n['Node Type'], n['Relation Name'] ?? n['Index Name']]))}`,
    );
  });

  test('stats and the dashboard: window counts, oldest pending, failed errors, lag sample, lag per provider', async () => {
    const filter = { since: hoursAgo(24) };
    // The last 24 hours are a quarter of this month's partition here (the data is 60 days of
    // 1,000 rows; today is day ${new Date().getUTCDate()}): reading that partition whole is the right plan.
    const thisMonth = monthPartition(new Date()).name;
    for (const work of [
      () => countByProviderAndStatus(db, filter),
      () => oldestPendingByProvider(db, {}),
      () => countFailedByErrorShape(db, {}),
      () => sampleSettledLag(db, filter, 10_000),
      () => settledLagByProvider(db, new Date()),
    ]) {
      assertIndexOnly(await inboxPlanOf(work), 'webhook_inbox_status_received_at_provider_idx', new Date().getUTCDate() <= 8 ? thisMonth : undefined);
    }
  });

  test('a window reads no month before it: stats --since 24h costs the same on a year of history as on a month', async () => {
    const since = hoursAgo(24);
    const monthBefore = monthEndedBy(since);
    for (const work of [
      () => countByProviderAndStatus(db, { since }),
      () => countDecisionsByProvider(db, { since }),
      () => sampleSettledLag(db, { since }, 10_000),
      () => settledLagByProvider(db, new Date()),
    ]) {
      const read = (await inboxPlanOf(work)).flatMap((n) => [n['Relation Name'], n['Index Name']]).filter(monthBefore);
      assert.deepEqual(read, [], `${work.toString()} reads only the partitions its window overlaps`);
    }
  });

  test("stats' error groups: each group's example is one primary-key probe, not one per month partition", async () => {
    let groups = 0;
    const ran = await executedInboxNodesOf(async () => (groups = (await countFailedByErrorShape(db, {})).length));
    assert.ok(groups > 0, 'the data has failed rows');
    // By id alone each group's lookup probed every month's primary key (webhook_inbox is
    // partitioned on received_at), so the cost grew with the months kept, not the failures.
    const probes = ran.filter((n) => onPartition('webhook_inbox_pkey', n['Index Name'] ?? '')).reduce((sum, n) => sum + n['Actual Loops'], 0);
    assert.equal(
      probes,
      groups,
      `one probe per group; executed: ${JSON.stringify(ran.map((n) => [n['Node Type'], n['Index Name'] ?? n['Relation Name'], n['Actual Loops']]))}`,
    );
  });

  test('stats --since: a last delivery inside the window is found in its partitions; earlier months are read only for a provider silent in it', async () => {
    const since = hoursAgo(24);
    const monthBefore = monthEndedBy(since);
    const providers = await listStoredProviders(db);
    const ran = await executedInboxNodesOf(() => findLastWebhookRequests(db, providers, { lookFirstSince: since }));
    const before = ran.flatMap((n) => [n['Relation Name'], n['Index Name']]).filter(monthBefore);
    assert.deepEqual(before, [], 'every provider delivered in the last 24 hours: no month before them is read');
    // What it answers is the all-time answer, whether the window holds the delivery or not.
    const allTime = await findLastWebhookRequests(db, providers);
    assert.deepEqual(await findLastWebhookRequests(db, providers, { lookFirstSince: since }), allTime);
    assert.deepEqual(await findLastWebhookRequests(db, providers, { lookFirstSince: new Date(Date.now() + 3_600_000) }), allTime);
  });

  test("the gauge refresher: a provider's last delivery in the last hour is found in that hour's partitions; earlier months are read only for a provider silent in it", async () => {
    // The refresher as the service runs it, on a drizzle handle whose logger hands its statements
    // to executedInboxNodesOf; no pg-boss queues, no lanes: only the inbox's queries matter here.
    const pool = database.connect('query-plans-gauges');
    const refresherDb: Database = drizzle(pool.sql, { schema, logger: { logQuery: (sql, params) => void recorded.push({ sql, params }) } });
    const refreshed = async (providers: string[]) => {
      const metrics = await refreshedGauges(refresherDb, providers);
      return new Map((await metrics.gauges.lastWebhookRequest.get()).values.map(({ labels, value }) => [String(labels.provider), value]));
    };
    // Its one statement on the partial (provider, received_at) where source = 'webhook' index; the
    // counts beside it rightly read older months (a backlog row can be any age).
    const lastWebhookRequestStatement = (sql: string) => /webhook_inbox/.test(sql) && /source = 'webhook'/.test(sql);
    const monthBefore = monthEndedBy(hoursAgo(1));

    // Every stored provider delivered within the last few minutes (a row every 86 s, the three in turn).
    const providers = await listStoredProviders(db);
    let gauges = new Map<string, number>();
    const ran = await executedInboxNodesOf(async () => (gauges = await refreshed(providers)), lastWebhookRequestStatement);
    assert.equal(recorded.filter(({ sql }) => lastWebhookRequestStatement(sql)).length, 1, 'one last-delivery statement per refresh');
    const before = ran.flatMap((n) => [n['Relation Name'], n['Index Name']]).filter(monthBefore);
    assert.deepEqual(
      before,
      [],
      'every provider delivered in the last hour: the last-delivery lookup reads no month before it (without a recent window it steps into every month)',
    );
    const allTime = await findLastWebhookRequests(db, providers);
    assert.deepEqual(gauges, new Map(allTime.map(({ provider, receivedAt }) => [provider, receivedAt.getTime() / 1000])));

    // A provider silent for the last hour (and for 40 days) is still found, in its older month.
    const quietAt = hoursAgo(40 * 24);
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, payload, raw_body, occurred_at, received_at, status, processed_at)
      values ('quiet', 'evt_quiet_1', 'charge.succeeded', '{}', '\\x7b7d', ${hoursAgo(50 * 24)}, ${hoursAgo(50 * 24)}, 'processed', ${hoursAgo(50 * 24)}),
             ('quiet', 'evt_quiet_2', 'charge.succeeded', '{}', '\\x7b7d', ${quietAt}, ${quietAt}, 'processed', ${quietAt})`;
    try {
      const quietRan = await executedInboxNodesOf(async () => (gauges = await refreshed([...providers, 'quiet'])), lastWebhookRequestStatement);
      assert.equal(gauges.get('quiet'), quietAt.getTime() / 1000, "the silent provider's newest delivery, 40 days ago");
      assert.ok(
        quietRan.some((n) => monthBefore(n['Relation Name']) || monthBefore(n['Index Name'])),
        'for it, the earlier months are read',
      );
    } finally {
      await database.sql`delete from webhook_inbox where provider = 'quiet'`;
    }
  });

  test('replay candidates: one provider, failed', async () => {
    assertIndexOnly(await inboxPlanOf(() => findReplayCandidates(db, { provider: 'stripe' }, ['failed'])), 'webhook_inbox_status_received_at_provider_idx');
  });

  test("ingest: a batch's duplicates are compared with their keys and stored events by index lookups", async () => {
    // The statement as group commit sends it, captured from the runner it is given.
    const sent: Array<{ text: string; params: unknown[] }> = [];
    const runner: SqlExecutor = {
      executeSql: async (text, params = []) => {
        sent.push({ text, params });
        return { rows: [] as never[] };
      },
    };
    const duplicates = Array.from(
      { length: 32 },
      (_, i) => ({ provider: 'stripe', event: { eventId: `evt_${i * 97}` }, fingerprint: 'f' }) as unknown as IncomingEvent,
    );
    await selectStoredEventsOfOtherFingerprint(runner, duplicates);
    const [row] = await database.sql.unsafe(`explain (format json) ${sent[0]!.text}`, sent[0]!.params as never[]);
    const plan = nodes(row!['QUERY PLAN'][0].Plan);
    assertIndexOnly(
      plan.filter((n) => isInboxRelation(n['Relation Name']) || INBOX_INDEX.test(n['Index Name'] ?? '')),
      'webhook_inbox_provider_event_id_idx',
    );
    assert.ok(
      plan.some((n) => n['Index Name'] === 'webhook_event_keys_pkey'),
      'the keys are read on their primary key',
    );
  });

  test('show: one event by its natural key or its id; the provider list hops along an index', async () => {
    assertIndexOnly(await inboxPlanOf(() => findEventByKey(db, 'stripe', 'evt_3000')), 'webhook_inbox_provider_event_id_idx');
    assertIndexOnly(await inboxPlanOf(() => findEventById(db, 3000)), 'webhook_inbox_pkey');
    const hops = await inboxPlanOf(() => listStoredProviders(db));
    assert.deepEqual(
      hops.filter((n) => n['Node Type'] === 'Seq Scan'),
      [],
    );
    assert.deepEqual(await listStoredProviders(db), ['asaas', 'pagarme', 'stripe']);
  });
});

describe("the dashboard's event list: a page walks an index from the last id, it never sorts the table", () => {
  const page = (filter: EventListFilter, beforeId?: number) => () =>
    findEventsPage(db, filter, { beforeId, limit: 51, providers: ['asaas', 'pagarme', 'stripe'] });

  /**
   * The statement's plan with sequential scans (and sorts, unless told) priced out, on one
   * connection: a plan that still has either has no index to serve it. Whether the planner takes the index at a given
   * size is its call: on these 60,000 rows a scan is cheaper; on 10^6 rows it takes these walks.
   */
  async function pricedPlanOf(work: () => Promise<unknown>, options = { sortsToo: true }): Promise<PlanNode[]> {
    recorded.length = 0;
    await work();
    const [statement] = recorded.filter(({ sql }) => /webhook_inbox/.test(sql));
    assert.ok(statement, 'the work queried webhook_inbox');
    return database.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      if (options.sortsToo) await tx`set local enable_sort = off`;
      const [row] = await tx.unsafe(`explain (format json) ${statement.sql}`, statement.params as never[]);
      return nodes(row!['QUERY PLAN'][0].Plan);
    });
  }
  const described = (plan: PlanNode[]) => JSON.stringify(plan.map((n) => [n['Node Type'], n['Index Name'] ?? n['Relation Name']]));
  function assertWalks(plan: PlanNode[], index: string, options: { sorted: boolean }) {
    const scanned = plan.filter((n) => n['Node Type'] === 'Seq Scan' && partitionsWithRows.has(n['Relation Name'] ?? ''));
    assert.deepEqual(scanned, [], `no sequential scan; plan: ${described(plan)}`);
    assert.ok(
      plan.some((n) => onPartition(index, n['Index Name'] ?? '')),
      `walks ${index}; plan: ${described(plan)}`,
    );
    if (!options.sorted) assert.ok(!plan.some((n) => n['Node Type'] === 'Sort'), `no Sort: the index gives the order; plan: ${described(plan)}`);
  }

  test('no filter, a provider, a type, a time range, a page deep in the table: the primary key, backwards', async () => {
    for (const work of [
      page({}),
      page({ provider: 'stripe' }),
      page({ eventType: 'charge.succeeded' }),
      page({}, 20_000),
      page({ provider: 'asaas', receivedFrom: hoursAgo(30 * 24), receivedBefore: hoursAgo(20 * 24) }),
    ]) {
      assertWalks(await pricedPlanOf(work), 'webhook_inbox_pkey', { sorted: false });
    }
  });

  test('a decision, alone or with a status: the partial (decision, id) index, in id order', async () => {
    for (const work of [page({ decision: 'rejected_amount' }), page({ status: 'ignored', decision: 'rejected_amount' }, 50_000)]) {
      assertWalks(await pricedPlanOf(work), 'webhook_inbox_decision_id_idx', { sorted: false });
    }
  });

  test('an event id or a charge id, with or without a provider: their indexes (the few rows found are sorted)', async () => {
    assertWalks(await pricedPlanOf(page({ eventId: 'evt_3000' }), { sortsToo: false }), 'webhook_inbox_provider_event_id_idx', { sorted: true });
    assertWalks(await pricedPlanOf(page({ chargeId: 'ch_1000' }), { sortsToo: false }), 'webhook_inbox_provider_resource_id_idx', { sorted: true });
    assertWalks(await pricedPlanOf(page({ provider: 'stripe', chargeId: 'ch_1000' }), { sortsToo: false }), 'webhook_inbox_provider_resource_id_idx', {
      sorted: true,
    });
  });
});
