import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { paymentsHandler } from '../../src/processing/payments-handler.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { createTestDatabase, type CreatedDatabase as TestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitForLegacy as waitFor } from '../support/wait.ts';
import { type InboxService, SECRET, inboxRows, isChain, paymentOf, startInbox, storeEvent, transitionsOf, waitUntilSettled } from './harness.ts';

let database: TestDatabase;
let service: InboxService;
const now = Math.floor(Date.now() / 1000);

// The payments handler, counting how many applies of one charge run at the same moment.
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
const countingPayments: EventHandler = {
  ...paymentsHandler,
  async apply(tx, events) {
    const charges = events.map(({ event }) => event.stored.resourceId ?? '');
    for (const charge of charges) {
      inFlight.set(charge, (inFlight.get(charge) ?? 0) + 1);
      maxInFlight.set(charge, Math.max(maxInFlight.get(charge) ?? 0, inFlight.get(charge)!));
    }
    try {
      return await paymentsHandler.apply(tx, events);
    } finally {
      for (const charge of charges) inFlight.set(charge, inFlight.get(charge)! - 1);
    }
  },
};

function event(id: string, type: string, chargeId: string, createdOffset = 0, amountRefunded?: number) {
  return { eventId: id, type, chargeId, created: now + createdOffset, body: chargeEvent({ id, type, chargeId, created: now + createdOffset, amountRefunded }) };
}

async function jobOutcomes(inboxId: number): Promise<string[] | undefined> {
  const rows = await database.sql`
    select state, output->>'outcome' as outcome from pgboss.job
    where name = ${WEBHOOKS_QUEUE} and (data->>'inboxId')::bigint = ${inboxId}`;
  if (rows.some((r) => r.state !== 'completed')) return undefined;
  return rows.map((r) => r.outcome as string).sort();
}

before(async () => {
  database = await createTestDatabase();
  service = await startInbox(database.url, { handlers: createHandlerRegistry([countingPayments]) });
});

after(async () => {
  await service?.stop();
  await database?.drop();
});

describe('processing is idempotent', () => {
  test('the same event delivered 50 times at once changes the payment once', async () => {
    const body = chargeEvent({ id: 'evt_fifty', type: 'charge.succeeded', chargeId: 'ch_fifty', created: now });
    const responses = await Promise.all(Array.from({ length: 50 }, () => postStripe(service.baseUrl, body, SECRET)));
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([200]));
    const [row] = await waitUntilSettled(database.sql, ['evt_fifty']);
    assert.equal(row!.status, 'processed');
    assert.equal(row!.attempts, 1);
    const payment = await paymentOf(database.sql, 'ch_fifty');
    assert.deepEqual({ status: payment!.status, amount: payment!.amount, currency: payment!.currency }, { status: 'paid', amount: 2000, currency: 'BRL' });
    assert.deepEqual(await transitionsOf(database.sql, 'ch_fifty'), [{ inboxId: row!.id, from: null, to: 'paid' }]);
  });

  test('five jobs for one event, free to run at once, have one effect', async () => {
    const id = await storeEvent(database.sql, event('evt_five_jobs', 'charge.succeeded', 'ch_five_jobs'));
    // Distinct singleton keys, so pg-boss runs them side by side: only the inbox row lock decides.
    await service.boss.insert(WEBHOOKS_QUEUE, Array.from({ length: 5 }, (_, i) => ({ data: { inboxId: id }, singletonKey: `test-copy-${i}` })));
    const outcomes = await waitFor('all five jobs to complete', () => jobOutcomes(id));
    assert.deepEqual(outcomes, ['processed', 'skipped', 'skipped', 'skipped', 'skipped']);
    const [row] = await inboxRows(database.sql, ['evt_five_jobs']);
    assert.equal(row!.status, 'processed');
    assert.equal(row!.attempts, 1, 'only the job that applied it counts an attempt');
    assert.deepEqual(await transitionsOf(database.sql, 'ch_five_jobs'), [{ inboxId: id, from: null, to: 'paid' }]);
  });

  test('a job for an event that is already processed changes nothing', async () => {
    const [row] = await inboxRows(database.sql, ['evt_fifty']);
    await service.boss.insert(WEBHOOKS_QUEUE, [{ data: { inboxId: row!.id }, singletonKey: 'stripe:ch_fifty' }]);
    const outcomes = await waitFor('the extra job to complete', () => jobOutcomes(row!.id).then((o) => (o?.length === 2 ? o : undefined)));
    assert.deepEqual(outcomes, ['processed', 'skipped']);
    assert.equal((await inboxRows(database.sql, ['evt_fifty']))[0]!.attempts, 1);
    assert.equal((await transitionsOf(database.sql, 'ch_fifty')).length, 1);
  });
});

describe('events of one charge are serialized', () => {
  test('pending, paid and refunded posted at once are applied one at a time and chain up', async () => {
    const events = [
      event('evt_serial_p', 'charge.pending', 'ch_serial', 0),
      event('evt_serial_s', 'charge.succeeded', 'ch_serial', 1),
      event('evt_serial_r', 'charge.refunded', 'ch_serial', 2, 2000),
    ];
    const responses = await Promise.all(events.map((e) => postStripe(service.baseUrl, e.body, SECRET)));
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 200]);
    await waitUntilSettled(database.sql, events.map((e) => e.eventId));
    assert.equal(maxInFlight.get('ch_serial'), 1, 'never two applies of one charge at the same moment');
    const payment = await paymentOf(database.sql, 'ch_serial');
    assert.equal(payment!.status, 'refunded');
    assert.equal(payment!.amountRefunded, 2000);
    assert.ok(isChain(await transitionsOf(database.sql, 'ch_serial'), 'refunded'));
  });

  test('with pg-boss serialization bypassed, the payment row lock still keeps concurrent events of one charge from losing updates', async () => {
    const charges = Array.from({ length: 8 }, (_, i) => `ch_locked_${i}`);
    const jobs = [];
    for (const charge of charges) {
      const events = [
        event(`evt_${charge}_p`, 'charge.pending', charge, 0),
        event(`evt_${charge}_s`, 'charge.succeeded', charge, 1),
        event(`evt_${charge}_r1`, 'charge.refunded', charge, 2, 500),
        event(`evt_${charge}_r2`, 'charge.refunded', charge, 3, 2000),
      ];
      for (const e of events) jobs.push({ data: { inboxId: await storeEvent(database.sql, e) }, singletonKey: `test-${e.eventId}` });
    }
    await service.boss.insert(WEBHOOKS_QUEUE, jobs);
    await waitUntilSettled(database.sql, charges.flatMap((c) => [`evt_${c}_p`, `evt_${c}_s`, `evt_${c}_r1`, `evt_${c}_r2`]));
    for (const charge of charges) {
      const payment = await paymentOf(database.sql, charge);
      assert.equal(payment!.status, 'refunded', charge);
      assert.equal(payment!.amountRefunded, 2000, charge);
      const transitions = await transitionsOf(database.sql, charge);
      assert.ok(isChain(transitions, 'refunded'), `${charge}: ${JSON.stringify(transitions)}`);
      assert.equal(new Set(transitions.map((t) => t.inboxId)).size, transitions.length, 'no event took effect twice');
    }
  });
});
