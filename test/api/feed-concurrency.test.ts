/**
 * The feed under concurrent writers: every committed event exactly once across pages, none of a
 * rolled-back transaction, each payment's events in sequence order, while transactions that wrote
 * first commit last. The same schedule read with a bare `position > cursor` reader loses the
 * long-running transactions' events: the control that shows this test can fail.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DatabaseHandle, connectDatabase } from '../../src/db/client.ts';

import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { API_TOKEN, drainFeed, readFeedPage } from './feed-client.ts';
import { type Gate, type TestPayment, abortedWrite, createPayments, gate, heldWrite, writeChanges } from './outbox-writer.ts';

const database = useTestDatabase();
let writer: DatabaseHandle;
let service: TestService;

setup(async () => {
  writer = connectDatabase({ url: database.url, poolSize: 30, connectTimeoutSeconds: 5, applicationName: 'feed-concurrency-writer' });
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'receiver', INBOX_API_TOKEN: API_TOKEN } });
});

setup(() => {
  database.onTeardown(() => writer?.close());
});

interface Reader {
  start(): Promise<string>;
  page(cursor: string): Promise<{ ids: string[]; cursor: string }>;
}

const PAGE = 7;

const feedReader: Reader = {
  start: async () => (await drainFeed(service.baseUrl, '', 1000)).cursor,
  async page(cursor) {
    const page = await readFeedPage(service.baseUrl, cursor, PAGE);
    return { ids: page.events.map((e) => e.id), cursor: page.next_cursor };
  },
};

/** What the feed must not be: a cursor over the bigserial alone. */
const naiveReader: Reader = {
  start: async () => String((await database.sql`select coalesce(max(position), 0) as max from payment_events`)[0]!.max),
  async page(cursor) {
    const rows = await database.sql`select id::text, position from payment_events where position > ${cursor} order by position limit ${PAGE}`;
    return { ids: rows.map((r) => r.id as string), cursor: rows.length > 0 ? String(rows.at(-1)!.position) : cursor };
  },
};

function pick(payments: readonly TestPayment[], seed: number): TestPayment[] {
  const count = 1 + (seed % 3);
  return Array.from({ length: count }, (_, i) => payments[(seed * 7 + i * 13) % payments.length]!).filter((p, i, all) => all.indexOf(p) === i);
}

/** `count` transactions over `concurrency` connections; every fifth rolls back after writing. */
async function writeConcurrently(payments: readonly TestPayment[], count: number, seedBase: number, concurrency = 20): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const seed = seedBase + next++;
        const targets = pick(payments, seed);
        if (seed % 5 === 0) await abortedWrite(writer.db, targets);
        else await writer.db.transaction((tx) => writeChanges(tx, targets));
      }
    }),
  );
}

interface Outcome {
  seen: string[];
  committed: Set<string>;
  heldIds: Set<string>;
  sequencesInFeedOrder: Map<string, number[]>;
}

/**
 * The schedule: some commits; three transactions write and stay open; many more commit (and some
 * roll back) while the reader pages; the held ones commit one by one among more writers.
 */
async function runSchedule(reader: Reader, prefix: string): Promise<Outcome> {
  const payments = await createPayments(database.sql, prefix, 60);
  const held = payments.slice(0, 3);
  const others = payments.slice(3);
  const seen: string[] = [];
  let cursor = await reader.start();
  // One reader: the background loop and the schedule's own drains take turns on the one cursor.
  let reading = Promise.resolve();
  const drain = () =>
    (reading = reading.then(async () => {
      for (;;) {
        const page = await reader.page(cursor);
        seen.push(...page.ids);
        cursor = page.cursor;
        if (page.ids.length === 0) return;
      }
    }));
  let writing = true;
  const readingMeanwhile = (async () => {
    while (writing) {
      await drain();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();

  await writeConcurrently(others, 20, 1);
  const releases: Gate[] = held.map(() => gate());
  const holders = held.map((p, i) => heldWrite(writer.db, [p], releases[i]!));
  await Promise.all(holders.map((h) => h.written));
  await writeConcurrently(others, 120, 100);
  await drain();
  releases[0]!.open();
  await holders[0]!.done;
  const second = writeConcurrently(others, 80, 300);
  releases[1]!.open();
  await Promise.all([second, holders[1]!.done]);
  await drain();
  releases[2]!.open();
  await holders[2]!.done;
  await writeConcurrently(others, 20, 500);
  writing = false;
  await readingMeanwhile;

  const ids = payments.map((p) => p.id);
  const rows = await database.sql`select id::text, payment_id, sequence from payment_events where payment_id = any(${ids}::bigint[])`;
  const committed = new Set(rows.map((r) => r.id as string));
  const heldIds = new Set(rows.filter((r) => held.some((p) => p.id === Number(r.payment_id))).map((r) => r.id as string));
  // Other transactions still open (pg-boss's, the service's) may hold the horizon back for a moment;
  // a reader that can lose events is read once more, not waited for.
  if (reader === feedReader) {
    await waitFor(
      async () => {
        await drain();
        return seen.filter((id) => committed.has(id)).length >= committed.size;
      },
      { message: 'the feed to reach every committed event' },
    ).catch(() => undefined);
  } else await drain();
  const byId = new Map(rows.map((r) => [r.id as string, r]));
  const sequencesInFeedOrder = new Map<string, number[]>();
  for (const id of seen) {
    const row = byId.get(id);
    if (!row) continue;
    const list = sequencesInFeedOrder.get(String(row.payment_id)) ?? [];
    list.push(row.sequence);
    sequencesInFeedOrder.set(String(row.payment_id), list);
  }
  return { seen: seen.filter((id) => byId.has(id)), committed, heldIds, sequencesInFeedOrder };
}

describe('the payment-events feed under concurrent writers', () => {
  test('every committed event exactly once across pages, in sequence order per payment, though long-running transactions commit after later ones', async () => {
    const { seen, committed, heldIds, sequencesInFeedOrder } = await runSchedule(feedReader, 'ch_feed');
    assert.ok(committed.size > 300, `only ${committed.size} events were written`);
    assert.equal(new Set(seen).size, seen.length, 'an event came twice');
    assert.deepEqual(new Set(seen), committed, 'the feed skipped a committed event or returned one that never committed');
    for (const id of heldIds) assert.ok(seen.includes(id), `held event ${id} missing`);
    for (const [payment, sequences] of sequencesInFeedOrder) {
      assert.deepEqual(
        sequences,
        sequences.map((_, i) => i + 1),
        `payment ${payment}: sequences in feed order ${sequences}`,
      );
    }
  });

  test("control: a bare position cursor over the same schedule skips the long-running transactions' events", async () => {
    const { seen, committed, heldIds } = await runSchedule(naiveReader, 'ch_naive');
    const missing = [...committed].filter((id) => !seen.includes(id));
    // Every held event is lost; the concurrent writers usually lose it some more (they commit out of order too).
    for (const id of heldIds) assert.ok(missing.includes(id), `held event ${id} was seen: the schedule no longer commits out of position order`);
  });

  test("a batch that got its xid before another took the payment's lock still comes after that one's event in the feed", async () => {
    const [payment] = await createPayments(database.sql, 'ch_xid_order', 1);
    const { cursor } = await drainFeed(service.baseUrl, '', 1000);
    const lockTaken = gate();
    const laterBatch = gate();
    // The first transaction gets its xid now (a batch locking its inbox rows), writes the payment last.
    const early = writer.db.transaction(async (tx) => {
      await tx.execute('select pg_current_xact_id()');
      lockTaken.open();
      await laterBatch.wait;
      await writeChanges(tx, [payment!], 'refunded');
    });
    await lockTaken.wait;
    await writer.db.transaction((tx) => writeChanges(tx, [payment!], 'paid'));
    laterBatch.open();
    await early;
    const events = await waitFor(
      async () => {
        const page = await readFeedPage(service.baseUrl, cursor, 1000);
        const mine = page.events.filter((e) => e.payment.charge_id === payment!.chargeId);
        return mine.length === 2 ? mine : undefined;
      },
      { message: 'both events in the feed' },
    );
    assert.deepEqual(
      events.map((e) => [e.sequence, e.payment.status]),
      [
        [1, 'paid'],
        [2, 'refunded'],
      ],
    );
  });
});
