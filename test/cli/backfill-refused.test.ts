import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RefusedEvent } from '../../src/operations/backfill.ts';
import { useTestDatabase } from '../support/database.ts';
import type { FakeGateway } from '../support/fake-gateway.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent } from '../support/stripe.ts';
import { useBackfillService } from './backfill-fixture.ts';
import { runInboxctl } from './run-inboxctl.ts';

// Found by a review: one listed event the inbox refuses (a type past the column's 80 characters,
// a body the driver cannot read) stopped every backfill with exit 4 and "run it again", which
// refused it again: the run never passed, and every other missing event stayed missing.

const database = useTestDatabase();
const created = Math.floor(Date.now() / 1000) - 3600;
const event = (id: string, type: string, i: number) =>
  JSON.parse(chargeEvent({ id, type, chargeId: `ch_${id}`, created: created + i })) as Record<string, unknown>;
const longType = `charge.${'x'.repeat(90)}`;

// Oldest first: two the inbox stores, a type too long for it, one without `created` (the Stripe
// driver cannot read it), one the database refuses (a trigger stands in for a data error), one more it stores.
const listedOldestFirst = [
  event('evt_rf_1', 'charge.succeeded', 0),
  event('evt_rf_long_type', longType, 1),
  { ...event('evt_rf_no_created', 'charge.succeeded', 2), created: undefined },
  event('evt_rf_db_refuses', 'charge.succeeded', 3),
  event('evt_rf_2', 'charge.succeeded', 4),
];

const backfill = useBackfillService(database, {
  provider: 'stripe',
  providerConfig: { ordering: { default: 'occurred_at' } },
  env: { WEBHOOK_SECRET_STRIPE: 'whsec_backfill_refused', GATEWAY_API_KEY_STRIPE: 'sk_test_backfill_refused' },
  serve: (gateway: FakeGateway) =>
    gateway.rules.push((request) =>
      request.pathname === '/v1/events'
        ? { status: 200, json: { object: 'list', url: '/v1/events', has_more: false, data: [...listedOldestFirst].reverse() } }
        : undefined,
    ),
});

setup(async () => {
  await database.sql.unsafe(
    `create function refuse_as_data_error() returns trigger language plpgsql as $$ begin raise exception 'value refused (simulated)' using errcode = '22023'; end $$`,
  );
  await database.sql.unsafe(
    `create trigger refuse_insert before insert on webhook_inbox for each row when (new.event_id = 'evt_rf_db_refuses') execute function refuse_as_data_error()`,
  );
});

const storedIds = async () => (await database.sql`select event_id from webhook_inbox order by event_id`).map((r) => r.event_id as string);

describe('inboxctl backfill with listed events the inbox refuses', () => {
  test('stores every other missing event, names each refused one with why, and exits 1 (done, needs attention), every run', async () => {
    const dry = await runInboxctl(['backfill', 'stripe', '--since', '2h', '--dry-run', '--json'], backfill.env);
    assert.equal(dry.code, 1, dry.stderr);
    assert.deepEqual(
      dry.json().refused.map((r: { eventId: string }) => r.eventId),
      ['evt_rf_no_created', 'evt_rf_long_type'],
      'the driver refuses these two before anything is stored',
    );

    const run = await runInboxctl(['backfill', 'stripe', '--since', '2h', '--json'], backfill.env);
    assert.equal(run.code, 1, `done, with events that need attention; stderr: ${run.stderr}`);
    const answer = run.json();
    assert.deepEqual(
      { listed: answer.listed, alreadyPresent: answer.alreadyPresent, stored: answer.stored, storedEventIds: answer.storedEventIds },
      { listed: 5, alreadyPresent: 0, stored: 2, storedEventIds: ['evt_rf_1', 'evt_rf_2'] },
    );
    const refused = new Map<string, RefusedEvent>(answer.refused.map((r: RefusedEvent) => [r.eventId, r]));
    assert.deepEqual([...refused.keys()].sort(), ['evt_rf_db_refuses', 'evt_rf_long_type', 'evt_rf_no_created']);
    assert.deepEqual(refused.get('evt_rf_long_type'), {
      eventId: 'evt_rf_long_type',
      eventType: longType,
      code: 'malformed_payload',
      reason: refused.get('evt_rf_long_type')!.reason,
    });
    assert.match(refused.get('evt_rf_long_type')!.reason, /eventType/);
    assert.equal(refused.get('evt_rf_no_created')!.eventType, 'charge.succeeded');
    assert.match(refused.get('evt_rf_no_created')!.reason, /created/);
    assert.equal(refused.get('evt_rf_db_refuses')!.code, 'event_unstorable');
    assert.deepEqual(await storedIds(), ['evt_rf_1', 'evt_rf_2']);

    // A second run cannot store them either, and says so again: never forgotten, never exit 4.
    const again = await runInboxctl(['backfill', 'stripe', '--since', '2h'], backfill.env);
    assert.equal(again.code, 1, again.stderr);
    assert.match(again.out, /listed 5, already present 2, stored 0, refused 3/);
    assert.match(again.out, /evt_rf_long_type +charge\.x+: malformed_payload/);
    assert.match(again.out, /evt_rf_db_refuses +charge\.succeeded: event_unstorable/);
    assert.match(again.out, /not in the inbox/);
    assert.doesNotMatch(again.stderr, /run it again/);
    assert.deepEqual(await storedIds(), ['evt_rf_1', 'evt_rf_2']);
  });
});
