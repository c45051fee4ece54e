/**
 * Processing's database time per batch was tuned (docs/processing.md, "Batches share a
 * transaction"): a batch costs a fixed handful of statements and one COMMIT, whatever its size.
 * These count what a batch sends PostgreSQL, statement by statement, so a step that adds a round
 * trip to the path, or one per event, shows here with its name.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from '../../src/db/schema.ts';
import type { Database } from '../../src/db/client.ts';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { createBuiltInHandlers } from '../../src/processing/built-in-handlers.ts';
import { type EventResult, type ProcessingDeps, processBatch } from '../../src/processing/process-batch.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { testConfig } from '../support/config.ts';
import { chargeEvent } from '../support/stripe.ts';
import { SECRET, storeEvent } from './harness.ts';

const database = useTestDatabase();
const created = 1_760_000_000;
let db: Database;
/** What the processing pool sent, in order: postgres.js reports each statement as it writes it. */
let sent: string[] = [];

setup(() => {
  // fetch_types off: the count is processing's statements only, not the driver's first-connection lookup.
  const pool = postgres(database.url, { max: 2, onnotice: () => {}, fetch_types: false, debug: (_connection, text) => void sent.push(text) });
  database.onTeardown(() => pool.end({ timeout: 5 }));
  db = drizzle(pool, { schema });
});

/** A statement's verb and table (`insert payment_events`), `… for update` when it locks: enough to tell the steps apart. */
function nameOf(text: string): string {
  const statement = text.replace(/\s+/g, ' ').trim().toLowerCase();
  const verb = statement.split(' ')[0]!;
  if (['begin', 'commit', 'rollback', 'savepoint', 'release'].includes(verb)) return verb;
  // The table is named outside any parentheses (a column may read `extract(epoch from …)`).
  let outer = statement;
  while (/\([^()]*\)/.test(outer)) outer = outer.replace(/\([^()]*\)/g, '');
  const table = /^(?:insert into|update|delete from) "?([a-z_.]+)"?/.exec(outer)?.[1] ?? / from "?([a-z_.]+)"?/.exec(outer)?.[1];
  if (table === undefined) return statement;
  return `${verb} ${table}${statement.endsWith('for update') ? ' for update' : ''}`;
}

/** What the stand-in delivery announcer sends: one statement in the batch's transaction. */
const ANNOUNCED = "select 'deliveries queued'";

const charge = (eventId: string, type: string, chargeId: string, offset: number, amountRefunded = 0) => ({
  eventId,
  type,
  chargeId,
  created: created + offset,
  body: chargeEvent({ id: eventId, type, chargeId, created: created + offset, amountRefunded }),
});

/** A fresh handler each time (what it remembers, the carry-over's end, is per process). */
function processingDeps(announced: number[] = []): ProcessingDeps {
  return {
    db,
    providers: testConfig({ WEBHOOK_SECRET_STRIPE: SECRET }).providers,
    handlers: createHandlerRegistry(
      createBuiltInHandlers({
        // Stands for the delivery announcer: one statement in the batch's transaction, and how many changes it was told.
        async announceChanges(tx, changes) {
          announced.push(changes.length);
          await tx.execute(sql.raw(ANNOUNCED));
        },
      }),
    ),
  };
}

/** The statements one processBatch call sent, by name. */
async function statementsOf(deps: ProcessingDeps, inboxIds: readonly number[]): Promise<string[]> {
  sent = [];
  const results: EventResult[] = await processBatch(
    deps,
    inboxIds.map((inboxId) => ({ inboxId })),
  );
  for (const result of results) if ('error' in result) throw result.error;
  return sent.map(nameOf);
}

const store = async (events: ReturnType<typeof charge>[]) => Promise.all(events.map((event) => storeEvent(database.sql, event)));
const charges = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `ch_${prefix}_${i}`);

// The steps of a batch that creates its payments. The carry-over of facts is done (a new
// database's is: no inbox row predates payment_facts), so the fold reads payment_facts only.
const CREATING = [
  'select webhook_inbox',
  'begin',
  'select webhook_inbox for update',
  'select payments for update',
  'insert payments',
  'select payment_facts',
  'update payments',
  'insert payment_transitions',
  'insert payment_events',
  ANNOUNCED,
  'update webhook_inbox',
  'commit',
];

describe('statements per batch', () => {
  test('a batch of first events: the same twelve statements for one event and for twenty, delivery announced once, in the transaction', async () => {
    const announced: number[] = [];
    const deps = processingDeps(announced);
    const [single] = charges('single', 1);
    const first = await statementsOf(deps, await store([charge('evt_single_paid', 'charge.succeeded', single!, 0)]));
    // Once per process: whether the carry-over is done, remembered once it is.
    assert.deepEqual(first, [...CREATING.slice(0, 5), 'select payment_facts_carry_over', ...CREATING.slice(5)]);
    const many = charges('many', 20);
    const twenty = await statementsOf(deps, await store(many.map((id, i) => charge(`evt_many_paid_${i}`, 'charge.succeeded', id, 0))));
    assert.deepEqual(twenty, CREATING);
    assert.deepEqual(announced, [1, 20]);
  });

  test('a batch of later events of existing payments: no insert of payments, the rest as before', async () => {
    const deps = processingDeps();
    const ids = charges('later', 10);
    await statementsOf(deps, await store(ids.map((id, i) => charge(`evt_later_paid_${i}`, 'charge.succeeded', id, 0))));
    const refunds = await statementsOf(deps, await store(ids.map((id, i) => charge(`evt_later_refund_${i}`, 'charge.refunded', id, 60, 500))));
    assert.deepEqual(
      refunds,
      CREATING.filter((name) => name !== 'insert payments'),
    );
  });

  test('a batch that changes no payment (every event told again under a new id) writes no payment, transition, outbound event nor delivery', async () => {
    const announced: number[] = [];
    const deps = processingDeps(announced);
    const ids = charges('again', 5);
    await statementsOf(deps, await store(ids.map((id, i) => charge(`evt_again_paid_${i}`, 'charge.succeeded', id, 0))));
    const again = await statementsOf(deps, await store(ids.map((id, i) => charge(`evt_again_paid_twice_${i}`, 'charge.succeeded', id, 0))));
    assert.deepEqual(again, [
      'select webhook_inbox',
      'begin',
      'select webhook_inbox for update',
      'select payments for update',
      'select payment_facts',
      'update webhook_inbox',
      'commit',
    ]);
    assert.deepEqual(announced, [5]);
  });

  test('while the carry-over is not done, every batch also asks whether it is, and reads the inbox rows it has not reached', async () => {
    await database.sql`update payment_facts_carry_over set target_inbox_id = 9000000000000`;
    try {
      const deps = processingDeps();
      const ids = charges('carrying', 3);
      const first = await statementsOf(deps, await store(ids.map((id, i) => charge(`evt_carrying_paid_${i}`, 'charge.succeeded', id, 0))));
      const second = await statementsOf(deps, await store(ids.map((id, i) => charge(`evt_carrying_refund_${i}`, 'charge.refunded', id, 60, 500))));
      const carrying = ['select payment_facts_carry_over', 'select webhook_inbox', 'select payment_facts'];
      assert.deepEqual(first, [...CREATING.slice(0, 3), 'select payments for update', 'insert payments', ...carrying, ...CREATING.slice(6)]);
      assert.deepEqual(second, [...CREATING.slice(0, 3), 'select payments for update', ...carrying, ...CREATING.slice(6)]);
    } finally {
      await database.sql`update payment_facts_carry_over set target_inbox_id = carried_through_inbox_id`;
    }
  });
});
