import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { type EventHandler, createHandlerRegistry } from '../../src/processing/handlers.ts';
import { builtInHandlers } from '../support/handlers.ts';
import { type EventResult, type ProcessingDeps, processBatch } from '../../src/processing/process-batch.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { testConfig } from '../support/config.ts';
import { chargeEvent } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { SECRET, inboxRows, paymentOf, storeEvent, transitionsOf } from './harness.ts';

// A worker applies a fetched batch of jobs in one transaction. These pin down what that must not
// cost: one event's failure or slowness stays its own.

const now = Math.floor(Date.now() / 1000);
const database = useTestDatabase();
let handle: DatabaseHandle;
const providers = () => testConfig({ WEBHOOK_SECRET_STRIPE: SECRET }).providers;

setup(async () => {
  handle = database.connect('batches-test', 4);
});

function charge(eventId: string, type: string, chargeId: string, createdOffset = 0) {
  const created = now + createdOffset;
  return { eventId, type, chargeId, created, body: chargeEvent({ id: eventId, type, chargeId, created }) };
}

function customer(eventId: string, type: string) {
  const body = JSON.stringify({ id: eventId, object: 'event', created: now, type, data: { object: { id: `cus_${eventId}`, object: 'customer' } } });
  return { eventId, type, chargeId: `cus_${eventId}`, created: now, body };
}

const outcomes = (results: EventResult[]) => results.map((r) => ('outcome' in r ? r.outcome : `error: ${(r.error as Error).message}`));

describe('a batch of jobs', () => {
  test('a handler that throws for one event fails only that event; the rest of the batch is applied', async () => {
    const exploding: EventHandler = {
      name: 'exploding',
      kinds: ['stripe:customer.deleted'],
      async apply() {
        throw new TypeError('handler bug: customer has no email');
      },
    };
    const deps: ProcessingDeps = { db: handle.db, providers: providers(), handlers: createHandlerRegistry([...builtInHandlers, exploding]) };
    const ids = [
      await storeEvent(database.sql, charge('evt_b1', 'charge.succeeded', 'ch_b1')),
      await storeEvent(database.sql, customer('evt_b2', 'customer.deleted')),
      await storeEvent(database.sql, charge('evt_b3', 'charge.succeeded', 'ch_b3')),
    ];
    const results = await processBatch(
      deps,
      ids.map((inboxId) => ({ inboxId })),
    );
    assert.deepEqual(outcomes(results), ['processed', 'error: handler bug: customer has no email', 'processed']);
    const rows = await inboxRows(database.sql, ['evt_b1', 'evt_b2', 'evt_b3']);
    assert.deepEqual(
      rows.map((r) => [r.eventId, r.status, r.attempts]),
      [
        ['evt_b1', 'processed', 1],
        ['evt_b2', 'pending', 1],
        ['evt_b3', 'processed', 1],
      ],
    );
    assert.equal((await paymentOf(database.sql, 'ch_b1'))?.status, 'paid');
    assert.equal((await transitionsOf(database.sql, 'ch_b3')).length, 1, 'applied once, not once per try');
  });

  test('an event whose prepare is slow does not hold back the events prepared at once', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow: EventHandler = {
      name: 'slow',
      kinds: ['stripe:customer.updated'],
      async prepare() {
        await released;
      },
      async apply(_tx, events) {
        return events.map(() => ({ outcome: 'processed' as const }));
      },
    };
    const deps: ProcessingDeps = { db: handle.db, providers: providers(), handlers: createHandlerRegistry([...builtInHandlers, slow]) };
    const ids = [
      await storeEvent(database.sql, customer('evt_w1', 'customer.updated')),
      await storeEvent(database.sql, charge('evt_w2', 'charge.succeeded', 'ch_w2')),
    ];
    const processing = processBatch(
      deps,
      ids.map((inboxId) => ({ inboxId })),
    );
    await waitFor(async () => (await inboxRows(database.sql, ['evt_w2']))[0]?.status === 'processed', {
      message: 'the charge event to be processed while its neighbour is still preparing (held back by the slow prepare?)',
      timeoutMs: 10_000,
    });
    assert.equal((await inboxRows(database.sql, ['evt_w1']))[0]?.status, 'pending');
    release();
    assert.deepEqual(outcomes(await processing), ['processed', 'processed']);
  });

  test('a recorded fact this version cannot read is replaced by its payload in the fold', async () => {
    const deps: ProcessingDeps = { db: handle.db, providers: providers(), handlers: createHandlerRegistry(builtInHandlers) };
    const paid = await storeEvent(database.sql, charge('evt_f1', 'charge.succeeded', 'ch_f1'));
    assert.deepEqual(outcomes(await processBatch(deps, [{ inboxId: paid }])), ['processed']);
    // As if written by another version: the fold must read the payload (paid) instead.
    await database.sql`update webhook_inbox set fact = ${database.sql.json({ shape: 'unknown' })} where id = ${paid}`;
    // Older than paid: known paid, it changes nothing; unknown, it would make the payment pending.
    const late = await storeEvent(database.sql, charge('evt_f2', 'charge.pending', 'ch_f1', -10));
    assert.deepEqual(outcomes(await processBatch(deps, [{ inboxId: late }])), ['ignored']);
    assert.equal((await paymentOf(database.sql, 'ch_f1'))?.status, 'paid');
  });

  test("a job's received time finds its row in that month's partition, to the row's last microsecond; a job without one, or with a wrong one, finds it all the same", async () => {
    const deps: ProcessingDeps = { db: handle.db, providers: providers(), handlers: createHandlerRegistry(builtInHandlers) };
    const edge = await storeEvent(database.sql, charge('evt_r1', 'charge.succeeded', 'ch_r1'));
    const old = await storeEvent(database.sql, charge('evt_r2', 'charge.succeeded', 'ch_r2'));
    const wrong = await storeEvent(database.sql, charge('evt_r3', 'charge.succeeded', 'ch_r3'));
    // The last microsecond of a month (the row moves to the partition that holds it): the job knows it to the millisecond.
    await database.sql`update webhook_inbox set received_at = '2026-01-31T23:59:59.999999Z' where id = ${edge}`;
    // One job per call: a batch's window spans all of its jobs' times.
    const edgeResult = await processBatch(deps, [{ inboxId: edge, receivedAt: new Date('2026-01-31T23:59:59.999Z') }]);
    // Queued by a version whose jobs did not carry the time.
    const oldResult = await processBatch(deps, [{ inboxId: old }]);
    // A time that is not the row's (job data edited by hand): the row is still found, not skipped.
    const wrongResult = await processBatch(deps, [{ inboxId: wrong, receivedAt: new Date('2020-05-01T00:00:00Z') }]);
    assert.deepEqual(outcomes([...edgeResult, ...oldResult, ...wrongResult]), ['processed', 'processed', 'processed']);
    assert.deepEqual(
      (await inboxRows(database.sql, ['evt_r1', 'evt_r2', 'evt_r3'])).map((r) => r.status),
      ['processed', 'processed', 'processed'],
    );
  });
});
