import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { useTestDatabase } from '../support/database.ts';
import { createApplyCounter } from '../support/apply-counter.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { SECRET, inboxRows, isChain, paymentOf, storeEvent, transitionsOf, waitUntilSettled } from './harness.ts';

const database = useTestDatabase();
const now = Math.floor(Date.now() / 1000);

// The payments handler, counting how many applies of one charge run at the same moment.
const applies = createApplyCounter();

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

const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET }, handlers: createHandlerRegistry([applies.handler()]) });

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
    await service.boss.insert(
      WEBHOOKS_QUEUE,
      Array.from({ length: 5 }, (_, i) => ({ data: { inboxId: id }, singletonKey: `test-copy-${i}` })),
    );
    const outcomes = await waitFor(() => jobOutcomes(id), { message: 'all five jobs to complete' });
    assert.deepEqual(outcomes, ['processed', 'skipped', 'skipped', 'skipped', 'skipped']);
    const [row] = await inboxRows(database.sql, ['evt_five_jobs']);
    assert.equal(row!.status, 'processed');
    assert.equal(row!.attempts, 1, 'only the job that applied it counts an attempt');
    assert.deepEqual(await transitionsOf(database.sql, 'ch_five_jobs'), [{ inboxId: id, from: null, to: 'paid' }]);
  });

  test('a job for an event that is already processed changes nothing', async () => {
    const [row] = await inboxRows(database.sql, ['evt_fifty']);
    await service.boss.insert(WEBHOOKS_QUEUE, [{ data: { inboxId: row!.id }, singletonKey: 'stripe:ch_fifty' }]);
    const outcomes = await waitFor(() => jobOutcomes(row!.id).then((o) => (o?.length === 2 ? o : undefined)), { message: 'the extra job to complete' });
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
    assert.deepEqual(
      responses.map((r) => r.status),
      [200, 200, 200],
    );
    await waitUntilSettled(
      database.sql,
      events.map((e) => e.eventId),
    );
    assert.equal(applies.maxInFlight('ch_serial'), 1, 'never two applies of one charge at the same moment');
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
    await waitUntilSettled(
      database.sql,
      charges.flatMap((c) => [`evt_${c}_p`, `evt_${c}_s`, `evt_${c}_r1`, `evt_${c}_r2`]),
    );
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
