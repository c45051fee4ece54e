import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import postgres from 'postgres';
import { createHandlerRegistry, type EventHandler } from '../../src/processing/handlers.ts';
import { paymentsHandler } from '../support/handlers.ts';
import { WEBHOOKS_DEAD_LETTER_QUEUE } from '../../src/queue/queues.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { testWorkerConfig } from '../support/config.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { useService } from '../support/service.ts';
import { waitFor } from '../support/wait.ts';
import { SECRET, inboxRows, paymentOf, waitUntilSettled } from './harness.ts';

const database = useTestDatabase();
let probe: postgres.Sql;
const now = Math.floor(Date.now() / 1000);
let explosions = 0;
let lockedDuringPrepare: boolean | undefined;

// A handler with a bug: every attempt throws.
const exploding: EventHandler = {
  name: 'exploding',
  kinds: ['stripe:invoice.paid'],
  async apply() {
    explosions += 1;
    throw new TypeError('handler bug: cannot read invoice lines');
  },
};

// A handler whose prepare checks, from another connection, that nothing holds the inbox row.
const preparing: EventHandler<string> = {
  name: 'preparing',
  kinds: ['stripe:customer.updated'],
  async prepare(event) {
    const rows = await probe.begin(async (tx) => {
      await tx`set local lock_timeout = '100ms'`;
      return tx`select id from webhook_inbox where id = ${event.inboxId} for update nowait`.catch(() => undefined);
    });
    lockedDuringPrepare = rows === undefined;
    return 'prepared';
  },
  async apply(_tx, events) {
    return events.map(({ context }) => ({ outcome: context === 'prepared' ? 'processed' : 'ignored' }));
  },
};

// A handler that notes what it was told about each payload: exact, or altered to be stored.
const lossySeen = new Map<string, boolean>();
const noting: EventHandler = {
  name: 'noting',
  kinds: ['stripe:customer.deleted'],
  async apply(_tx, events) {
    for (const { event } of events) lossySeen.set(event.stored.eventId, event.stored.payloadLossy);
    return events.map(() => ({ outcome: 'processed' as const }));
  },
};

setup(() => {
  probe = postgres(database.url, { max: 1, onnotice: () => {} });
  database.onTeardown(() => probe.end());
});
const service = useService({
  database,
  env: { WEBHOOK_SECRET_STRIPE: SECRET },
  handlers: createHandlerRegistry([paymentsHandler, exploding, preparing as EventHandler, noting]),
});

const post = async (id: string, type: string, resource: string) =>
  assert.equal((await postStripe(service.baseUrl, chargeEvent({ id, type, chargeId: resource, created: now }), SECRET)).status, 200);

describe('handlers', () => {
  test('a handler that throws is retried with every attempt counted, then the dead-letter worker marks the event failed', async () => {
    await post('evt_explodes', 'invoice.paid', 'in_explodes');
    const [row] = await waitUntilSettled(database.sql, ['evt_explodes'], 30_000);
    assert.equal(row!.status, 'failed');
    assert.equal(row!.attempts, testWorkerConfig.maxAttempts);
    assert.equal(explosions, testWorkerConfig.maxAttempts, 'one run of the handler per attempt');
    assert.equal(row!.lastError, 'TypeError: handler bug: cannot read invoice lines');
    const [deadLetter] = await database.sql`
      select state from pgboss.job where name = ${WEBHOOKS_DEAD_LETTER_QUEUE} and (data->>'inboxId')::bigint = ${row!.id}`;
    assert.equal(deadLetter?.state, 'completed');
  });

  test('an event no handler claims is stored and ignored', async () => {
    await post('evt_unclaimed', 'customer.created', 'cus_unclaimed');
    const [row] = await waitUntilSettled(database.sql, ['evt_unclaimed']);
    assert.deepEqual([row!.status, row!.attempts, row!.lastError], ['ignored', 1, null]);
    assert.equal(await paymentOf(database.sql, 'cus_unclaimed'), undefined);
  });

  test('prepare runs before the transaction, with no lock on the inbox row, and hands its result to apply', async () => {
    await post('evt_prepared', 'customer.updated', 'cus_prepared');
    const [row] = await waitUntilSettled(database.sql, ['evt_prepared']);
    assert.equal(lockedDuringPrepare, false);
    assert.equal(row!.status, 'processed');
  });

  test('a handler sees whether the payload was altered to be stored (payloadLossy), beside the exact one', async () => {
    const lossy = JSON.parse(chargeEvent({ id: 'evt_lossy_payload', type: 'customer.deleted', chargeId: 'cus_lossy', created: now }));
    lossy.data.object.description = 'a\u0000b';
    assert.equal((await postStripe(service.baseUrl, JSON.stringify(lossy), SECRET)).status, 200);
    await post('evt_exact_payload', 'customer.deleted', 'cus_exact');
    await waitUntilSettled(database.sql, ['evt_lossy_payload', 'evt_exact_payload']);
    assert.deepEqual(Object.fromEntries(lossySeen), { evt_lossy_payload: true, evt_exact_payload: false });
  });

  test('registering two handlers for one kind is refused at start', () => {
    assert.throws(() => createHandlerRegistry([exploding, { ...exploding, name: 'again' }]), /both register for kind "stripe:invoice.paid"/);
  });

  test('a failed row is left alone by a late job and by a repeated dead letter', async () => {
    const [failed] = await inboxRows(database.sql, ['evt_explodes']);
    const before = explosions;
    const ids = [await service.boss.send('webhooks', { inboxId: failed!.id }), await service.boss.send(WEBHOOKS_DEAD_LETTER_QUEUE, { inboxId: failed!.id })];
    await waitFor(
      async () => {
        const rows = await database.sql`select state from pgboss.job where id = any(${ids}::uuid[])`;
        return rows.length === 2 && rows.every((r) => r.state === 'completed');
      },
      { message: 'both jobs to complete' },
    );
    assert.deepEqual(await inboxRows(database.sql, ['evt_explodes']), [failed]);
    assert.equal(explosions, before);
  });
});
