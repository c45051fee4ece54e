import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { paymentsHandler } from '../../src/processing/payments-handler.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { createTestDatabase, type CreatedDatabase as TestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { type InboxService, SECRET, isChain, paymentOf, startInbox, storeEvent, transitionsOf, waitUntilSettled } from './harness.ts';

let database: TestDatabase;
let receiverAndWorkers: InboxService;
let workersOnly: InboxService;
const now = Math.floor(Date.now() / 1000);

// Both instances run in this process, so one counter sees applies of a charge on either of them.
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
const appliedBy = { receiverAndWorkers: 0, workersOnly: 0 };
const totalApplies = () => appliedBy.receiverAndWorkers + appliedBy.workersOnly;

function counting(instance: keyof typeof appliedBy): EventHandler {
  return {
    ...paymentsHandler,
    async apply(tx, events) {
      const charges = events.map(({ event }) => event.stored.resourceId ?? '');
      for (const charge of charges) {
        inFlight.set(charge, (inFlight.get(charge) ?? 0) + 1);
        maxInFlight.set(charge, Math.max(maxInFlight.get(charge) ?? 0, inFlight.get(charge)!));
      }
      try {
        appliedBy[instance] += events.length;
        return await paymentsHandler.apply(tx, events);
      } finally {
        for (const charge of charges) inFlight.set(charge, inFlight.get(charge)! - 1);
      }
    },
  };
}

before(async () => {
  database = await createTestDatabase();
  // Small batches so both instances get a share of the jobs.
  const worker = { batchSize: 4, concurrency: 2 };
  receiverAndWorkers = await startInbox(database.url, { handlers: createHandlerRegistry([counting('receiverAndWorkers')]), worker });
  workersOnly = await startInbox(database.url, { env: { INBOX_ROLE: 'worker' }, handlers: createHandlerRegistry([counting('workersOnly')]), worker });
});

after(async () => {
  await workersOnly?.stop();
  await receiverAndWorkers?.stop();
  await database?.drop();
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
  assert.deepEqual(rows.filter((r) => r.attempts !== 1), [], 'each event applied by exactly one attempt');
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
    const appliesBefore = totalApplies();
    await Promise.all(events.map(async (e) => assert.equal((await postStripe(receiverAndWorkers.baseUrl, e.body, SECRET)).status, 200)));
    await assertOneEffectEach(charges, events.map((e) => e.id));
    for (const charge of charges) assert.equal(maxInFlight.get(charge), 1, `${charge}: two applies at once across instances`);
    assert.equal(totalApplies() - appliesBefore, events.length, 'one apply per event, no retries');
    t.diagnostic(`applies so far: ${JSON.stringify(appliedBy)}`);
  });

  test('three jobs per event, free to run side by side on both instances, still have one effect per event', async (t) => {
    const charges = Array.from({ length: 30 }, (_, i) => `ch_copies_${i}`);
    const events = charges.flatMap(chargeHistory);
    const appliesBefore = totalApplies();
    const ids = [];
    for (const e of events) ids.push(await storeEvent(database.sql, { eventId: e.id, type: e.type, chargeId: e.chargeId, created: e.created, body: e.body }));
    // The charge's own key plus two keys of their own, all inserted at once: the inbox row lock is
    // all that stands between the copies, on either instance.
    await workersOnly.boss.insert(
      WEBHOOKS_QUEUE,
      ids.flatMap((inboxId, i) => [`stripe:${events[i]!.chargeId}`, `copy-1-${inboxId}`, `copy-2-${inboxId}`].map((singletonKey) => ({ data: { inboxId }, singletonKey }))),
    );
    await assertOneEffectEach(charges, events.map((e) => e.id));
    assert.equal(totalApplies() - appliesBefore, events.length, 'the copies stop at the inbox row lock, before the handler');
    t.diagnostic(`applies so far: ${JSON.stringify(appliedBy)}`);
  });
});
