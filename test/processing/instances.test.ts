import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { useTestDatabase } from '../support/database.ts';
import { createApplyCounter } from '../support/apply-counter.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { SECRET, isChain, paymentOf, storeEvent, transitionsOf, waitUntilSettled } from './harness.ts';

const database = useTestDatabase();
const now = Math.floor(Date.now() / 1000);

// Both instances run in this process, so one counter sees applies of a charge on either of them.
const applies = createApplyCounter();
// Small batches so both instances get a share of the jobs.
const worker = { batchSize: 4, concurrency: 2 };
const receiverAndWorkers = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET },
  handlers: createHandlerRegistry([applies.handler('receiverAndWorkers')]),
  worker,
});
const workersOnly = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'worker' },
  handlers: createHandlerRegistry([applies.handler('workersOnly')]),
  worker,
});

function chargeHistory(chargeId: string) {
  return [
    { id: `evt_${chargeId}_p`, type: 'charge.pending', created: now },
    { id: `evt_${chargeId}_s`, type: 'charge.succeeded', created: now + 1 },
    { id: `evt_${chargeId}_r`, type: 'charge.refunded', created: now + 2, amountRefunded: 700 },
  ].map((e) => ({ ...e, chargeId, body: chargeEvent({ id: e.id, type: e.type, chargeId, created: e.created, amountRefunded: e.amountRefunded }) }));
}

async function assertOneEffectEach(charges: string[], eventIds: string[]): Promise<void> {
  const rows = await waitUntilSettled(database.sql, eventIds, 30_000);
  assert.deepEqual(
    rows.filter((r) => r.attempts !== 1),
    [],
    'each event applied by exactly one attempt',
  );
  for (const charge of charges) {
    const payment = await paymentOf(database.sql, charge);
    assert.deepEqual([payment!.status, payment!.amountRefunded], ['partially_refunded', 700], charge);
    const transitions = await transitionsOf(database.sql, charge);
    assert.ok(isChain(transitions, 'partially_refunded'), `${charge}: ${JSON.stringify(transitions)}`);
    assert.equal(new Set(transitions.map((t) => t.inboxId)).size, transitions.length, `${charge}: an event took effect twice`);
  }
}

describe('two instances on one database', () => {
  test('never apply two events of one charge at once, and never apply an event twice', async (t) => {
    const charges = Array.from({ length: 30 }, (_, i) => `ch_two_${i}`);
    const events = charges.flatMap(chargeHistory);
    const appliesBefore = applies.attempted();
    await Promise.all(events.map(async (e) => assert.equal((await postStripe(receiverAndWorkers.baseUrl, e.body, SECRET)).status, 200)));
    await assertOneEffectEach(
      charges,
      events.map((e) => e.id),
    );
    for (const charge of charges) assert.equal(applies.maxInFlight(charge), 1, `${charge}: two applies at once across instances`);
    assert.equal(applies.attempted() - appliesBefore, events.length, 'one apply per event, no retries');
    t.diagnostic(`applies so far: ${JSON.stringify(applies.byLabel())}`);
  });

  test('three jobs per event, free to run side by side on both instances, still have one effect per event', async (t) => {
    const charges = Array.from({ length: 30 }, (_, i) => `ch_copies_${i}`);
    const events = charges.flatMap(chargeHistory);
    const appliesBefore = applies.attempted();
    const ids = [];
    for (const e of events) ids.push(await storeEvent(database.sql, { eventId: e.id, type: e.type, chargeId: e.chargeId, created: e.created, body: e.body }));
    // The charge's own key plus two keys of their own, all inserted at once: the inbox row lock is
    // all that stands between the copies, on either instance.
    await workersOnly.boss.insert(
      WEBHOOKS_QUEUE,
      ids.flatMap((inboxId, i) =>
        [`stripe:${events[i]!.chargeId}`, `copy-1-${inboxId}`, `copy-2-${inboxId}`].map((singletonKey) => ({ data: { inboxId }, singletonKey })),
      ),
    );
    await assertOneEffectEach(
      charges,
      events.map((e) => e.id),
    );
    assert.equal(applies.attempted() - appliesBefore, events.length, 'the copies stop at the inbox row lock, before the handler');
    t.diagnostic(`applies so far: ${JSON.stringify(applies.byLabel())}`);
  });
});
