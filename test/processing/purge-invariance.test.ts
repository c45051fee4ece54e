/**
 * Purge invariance, as a property: removing settled payloads (a purge, or a month partition
 * dropped whole) at any point of a payment's history changes nothing about where it ends or what
 * the application is told. Each run tells random charge histories (test/domain/charge-scenarios.ts)
 * in several gateways' own words (support/gateway-histories.ts: every payment gateway's mapping,
 * Mercado Pago's through its API), in a random arrival order with duplicates, twice: once as it
 * comes, once with the payloads removed at a random point. The payment rows and their outbound
 * events (payment_events) must be equal. In-process, on one database: the workers' own code
 * (processBatch, the built-in handlers with the real refetcher against a fake Mercado Pago
 * API), the retention code's own purge and partition drop.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import fc from 'fast-check';
import type { AppConfig } from '../../src/config/load-config.ts';
import { type DatabaseHandle, drizzleExecutor } from '../../src/db/client.ts';
import { createMonthPartitionsAhead, monthPartition } from '../../src/db/inbox-partitions.ts';
import { createArchiveWriter } from '../../src/operations/archive.ts';
import { dropExpiredPartitions } from '../../src/operations/partition-retention.ts';
import { purgeEvents } from '../../src/operations/retention.ts';
import { createBuiltInHandlers } from '../../src/processing/built-in-handlers.ts';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { type ProcessingDeps, processBatch } from '../../src/processing/process-batch.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import { gatewayApiTargets } from '../../src/refetch/settings.ts';
import { type Scenario, arrivalArb, scenarioArb } from '../domain/charge-scenarios.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { setup } from '../support/setup.ts';
import { type GatewayEvent, type HistoryGateway, gatewayEvents, historyGateways, mercadoPagoPayment } from './support/gateway-histories.ts';

// 60 random histories in `npm test`; the system tier runs 500 (purge-invariance.system.test.ts),
// and PURGE_INVARIANCE_RUNS sets any other number (a long soak, or 5 while changing this file).
const RUNS = Number(process.env.PURGE_INVARIANCE_RUNS ?? 60);
const BASE = 1_760_000_000;
const database = useTestDatabase();
let handle: DatabaseHandle;
let config: AppConfig;
let deps: ProcessingDeps;
let gateway: FakeGateway;
let archiveDir: string;
/** The refetcher's clock: when a Mercado Pago payment is read, the same in both tellings of a run. */
let readAt = new Date(BASE * 1000);

setup(async () => {
  // Thousands of small transactions: skip the fsync per COMMIT (visibility and locking are the same).
  await database.sql.unsafe(`alter database "${database.name}" set synchronous_commit = off`);
  handle = database.connect('purge-invariance-test', 4);
  gateway = await startFakeGateway();
  archiveDir = await mkdtemp(path.join(tmpdir(), 'purge-invariance-'));
  // Each gateway twice: the second name is the telling whose payloads are removed.
  const gateways = {
    stripe: { driver: 'stripe' },
    pagarme: { driver: 'pagarme' },
    'pagarme-legacy': { driver: 'pagarme-legacy' },
    asaas: { driver: 'asaas' },
    zoop: { driver: 'zoop', ordering: { default: 'occurred_at' } },
    mercadopago: { driver: 'mercadopago', api: { baseUrl: gateway.baseUrl }, ratePerSecond: 10_000 },
  };
  const providers = Object.fromEntries(
    Object.entries(gateways).flatMap(([name, settings]) => [
      [name, settings],
      [`${name}-b`, settings],
    ]),
  );
  const secrets = {
    STRIPE: 'whsec_purge_invariance',
    PAGARME_LEGACY: 'ak_test_purge_invariance',
    ASAAS: 'asaas-purge-invariance-token-0123456789',
    MERCADOPAGO: 'mp-purge-invariance',
  };
  const env: Record<string, string> = { INBOX_CONFIG: '/inbox.json', INBOX_ARCHIVE_DIR: archiveDir };
  for (const [name, secret] of Object.entries(secrets)) env[`WEBHOOK_SECRET_${name}`] = env[`WEBHOOK_SECRET_${name}_B`] = secret;
  env.GATEWAY_API_KEY_MERCADOPAGO = env.GATEWAY_API_KEY_MERCADOPAGO_B = 'TEST-purge-invariance';
  config = testConfig(env, { '/inbox.json': JSON.stringify({ providers }) });
  const refetcher = createRefetcher({ targets: gatewayApiTargets(config.providers.values()), clock: () => readAt });
  deps = { db: handle.db, providers: config.providers, handlers: createHandlerRegistry(createBuiltInHandlers({ refetcher })) };
});

after(async () => {
  await gateway?.close();
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

interface History {
  gateway: HistoryGateway;
  scenario: Scenario;
  events: GatewayEvent[];
}

interface Delivery {
  history: number;
  event: number;
}

const historyArb: fc.Arbitrary<Omit<History, 'events'>> = fc.record({ gateway: fc.constantFrom(...historyGateways), scenario: scenarioArb });

/** Several payments, their events interleaved in one arrival order (duplicates included), cut into batches. */
const runArb = fc
  .array(historyArb, { minLength: 2, maxLength: 4 })
  .map((histories) => histories.map((h): History => ({ ...h, events: gatewayEvents(h.gateway, h.scenario, 'key', BASE) })))
  .chain((histories) =>
    fc.record({
      histories: fc.constant(histories),
      arrivals: fc.tuple(...histories.map((h) => (h.events.length === 0 ? fc.constant([] as number[]) : arrivalArb(h.events.length)))),
      interleave: fc.infiniteStream(fc.nat()),
      batchSizes: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 6 }),
      removal: fc.constantFrom('purge' as const, 'partition' as const),
      cut: fc.nat(),
    }),
  )
  .map(({ histories, arrivals, interleave, batchSizes, removal, cut }) => {
    const queues = arrivals.map((order, history) => order.map((event): Delivery => ({ history, event })));
    const deliveries: Delivery[] = [];
    const picks = interleave[Symbol.iterator]();
    while (queues.some((q) => q.length > 0)) {
      const open = queues.filter((q) => q.length > 0);
      deliveries.push(open[picks.next().value! % open.length]!.shift()!);
    }
    const batches: Delivery[][] = [];
    for (let i = 0, b = 0; i < deliveries.length; b += 1) {
      const size = batchSizes[b % batchSizes.length]!;
      batches.push(deliveries.slice(i, i + size));
      i += size;
    }
    // Between two batches when there are two; with one, before it.
    return { histories, batches, removal, cutAfter: batches.length < 2 ? 0 : 1 + (cut % (batches.length - 1)) };
  });

type Run = typeof runArb extends fc.Arbitrary<infer T> ? T : never;

/**
 * One telling of a run: its payment keys, its providers (each gateway configured twice, so one
 * telling's purge leaves the other's rows alone), and the month its rows are received in: this
 * one, or for a telling whose payloads go with their month, a month partition of its own.
 */
interface Telling {
  keyOf: (history: number) => string;
  providerOf: (gateway: HistoryGateway) => string;
  month: ReturnType<typeof monthPartition> | undefined;
}

/** The delivery in its gateway's words for the telling's key, parsed by the gateway's driver as the receiver parses it. */
function stored(run: Run, telling: Telling, delivery: Delivery) {
  const history = run.histories[delivery.history]!;
  const event = gatewayEvents(history.gateway, history.scenario, telling.keyOf(delivery.history), BASE)[delivery.event]!;
  const rawBody = Buffer.from(event.rawBody);
  const request = { rawBody, header: () => undefined, query: new URLSearchParams(event.query) };
  const provider = telling.providerOf(history.gateway);
  const normalized = config.providers.get(provider)!.driver.parse(request, new Date(BASE * 1000));
  return { provider, normalized, rawBody, receivedAt: telling.month?.from ?? new Date() };
}

type StoredWebhookRequest = ReturnType<typeof stored>;

/**
 * Stores deliveries as the receiver does (the key claimed first: a delivery whose key exists, its
 * row purged or not, stores nothing), each event once, ids handed out in arrival order, and
 * answers the inbox ids to process: a redelivered event's job runs again, as a resend's would.
 */
async function storeDeliveries(rows: readonly StoredWebhookRequest[]): Promise<number[]> {
  const firsts = rows.filter(
    (row, i) => rows.findIndex((other) => other.provider === row.provider && other.normalized.eventId === row.normalized.eventId) === i,
  );
  const json = JSON.stringify(
    firsts.map(({ provider, normalized, rawBody, receivedAt }) => ({
      provider,
      event_id: normalized.eventId,
      event_type: normalized.eventType,
      resource_id: normalized.resourceId,
      payload: normalized.payload,
      raw_body: rawBody.toString('base64'),
      occurred_at: normalized.occurredAt.toISOString(),
      received_at: receivedAt.toISOString(),
    })),
  );
  const present = await database.sql`
    with input as (
      select v.*, n from jsonb_array_elements(${json}::text::jsonb) with ordinality as e(value, n),
        jsonb_to_record(e.value) as v(provider text, event_id text, event_type text, resource_id text, payload jsonb, raw_body text,
          occurred_at timestamptz, received_at timestamptz)),
    claimed as (
      insert into webhook_event_keys (provider, event_id, received_at) select provider, event_id, received_at from input
      on conflict do nothing returning provider, event_id),
    inserted as (
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at)
      select i.provider, i.event_id, i.event_type, i.resource_id, i.payload, decode(i.raw_body, 'base64'), i.occurred_at, i.received_at
      from input i join claimed c using (provider, event_id)
      order by i.n
      returning id, provider, event_id)
    select id::int as id, provider, event_id from inserted
    union all
    select w.id::int, w.provider, w.event_id from webhook_inbox w join input i using (provider, event_id)`;
  const idOf = new Map(present.map((r) => [`${r.provider}\u0000${r.event_id}`, r.id as number]));
  return rows.flatMap(({ provider, normalized }) => idOf.get(`${provider}\u0000${normalized.eventId}`) ?? []);
}

/** Mercado Pago's API shows each payment as of the latest step delivered so far (a read is of now). */
function showGatewayState(run: Run, tellings: readonly Telling[], delivered: ReadonlyMap<number, number>): void {
  for (const [history, lastEvent] of delivered) {
    const { gateway: name, scenario, events } = run.histories[history]!;
    if (name !== 'mercadopago') continue;
    for (const telling of tellings) {
      const key = telling.keyOf(history);
      gateway.resources.set(`/v1/payments/${key}`, mercadoPagoPayment(scenario, key, events[lastEvent]!.step));
    }
  }
}

/** A purge of the telling's providers, as `inboxctl purge` runs it, or the daily run's drop of its month. */
async function removePayloads(run: Run, telling: Telling): Promise<void> {
  const archive = createArchiveWriter({ clock: () => new Date() });
  const { month } = telling;
  if (month === undefined) {
    for (const name of new Set(run.histories.map((h) => h.gateway))) {
      await purgeEvents({ db: handle.db, archive }, { provider: telling.providerOf(name), cutoff: new Date(Date.now() + 1000), archiveDir });
    }
    return;
  }
  // The daily run as it will be a month after the telling's month: that month is past every window.
  const now = new Date(month.to.getTime() + 31 * 86_400_000);
  const dropped = await dropExpiredPartitions(
    { db: handle.db, archive },
    { providers: [...config.providers.keys()].map((name) => ({ name, retentionDays: 30 })), now, archiveDir },
  );
  assert.ok(
    dropped.dropped.some((d) => d.partition === month.name),
    `${month.name} dropped: ${JSON.stringify(dropped)}`,
  );
}

/**
 * Both tellings, batch by batch, each batch of both in one worker batch (their payments are
 * independent), the payloads of `removed` taken away before batch `run.cutAfter`.
 */
async function tell(run: Run, asItCame: Telling, removed: Telling): Promise<void> {
  const month = removed.month;
  if (month) await handle.db.transaction((tx) => createMonthPartitionsAhead(drizzleExecutor(tx), month.from, 0));
  const delivered = new Map<number, number>();
  for (const [index, batch] of run.batches.entries()) {
    if (index === run.cutAfter) await removePayloads(run, removed);
    for (const { history, event } of batch) {
      const steps = run.histories[history]!.events;
      if (steps[event]!.step >= (steps[delivered.get(history) ?? -1]?.step ?? -1)) delivered.set(history, event);
    }
    showGatewayState(run, [asItCame, removed], delivered);
    readAt = new Date((BASE + 1_000_000 + index) * 1000 + 500);
    const rows = [asItCame, removed].flatMap((telling) => batch.map((delivery) => stored(run, telling, delivery)));
    const jobs = (await storeDeliveries(rows)).map((inboxId) => ({ inboxId }));
    for (const result of await processBatch(deps, jobs)) if ('error' in result) throw result.error;
  }
}

/** What the payments table and the application hold of a telling's payments, keys and providers left out. */
async function outcome(run: Run, telling: Telling) {
  const keys = run.histories.map(({ gateway: name }, history) => ({ provider: telling.providerOf(name), key: telling.keyOf(history) }));
  const payments = await database.sql`
    select p.provider, p.gateway_charge_id, p.status, p.amount::float8 as amount, p.amount_refunded::float8 as amount_refunded, p.currency,
      p.last_gateway_event_at, p.inquiry_open, p.status_before_dispute, p.initial_status, p.event_sequence, p.checkpoint,
      coalesce((select json_agg(json_build_array(e.sequence, e.status, e.previous_status, e.amount, e.amount_refunded, e.currency, e.inquiry_open, e.occurred_at, e.cause_event_type) order by e.sequence)
        from payment_events e where e.payment_id = p.id), '[]') as events
    from payments p join unnest(${keys.map((k) => k.provider)}::text[], ${keys.map((k) => k.key)}::text[]) as k(provider, key)
      on p.provider = k.provider and p.gateway_charge_id = k.key`;
  return keys.map(({ provider, key }) => {
    const found = payments.find((p) => p.provider === provider && p.gateway_charge_id === key);
    if (!found) return null;
    const { provider: _provider, gateway_charge_id: _key, ...payment } = found;
    return payment;
  });
}

let runs = 0;

describe('purge invariance', () => {
  test(`property (${RUNS} runs): payloads purged or their month dropped at any point of random histories in every gateway's words change neither the payments nor what the application is told`, async () => {
    let removedMidway = 0;
    await fc.assert(
      fc.asyncProperty(runArb, async (run) => {
        runs += 1;
        // A month of its own, far from any real one, for a telling whose month is dropped.
        const month = run.removal === 'partition' ? monthPartition(new Date(Date.UTC(2100, runs, 1))) : undefined;
        const asItCame: Telling = { keyOf: (h) => `a${runs}_${h}`, providerOf: (g) => g, month: undefined };
        const removed: Telling = { keyOf: (h) => `b${runs}_${h}`, providerOf: (g) => `${g}-b`, month };
        await tell(run, asItCame, removed);
        if (run.cutAfter > 0 && run.cutAfter < run.batches.length) removedMidway += 1;
        assert.deepEqual(await outcome(run, removed), await outcome(run, asItCame));
      }),
      { numRuns: RUNS },
    );
    assert.ok(removedMidway > RUNS / 2, `payloads removed between two batches in ${removedMidway} runs`);
  });
});
