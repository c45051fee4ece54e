/**
 * System tier (slow: 10^5 rows). Migration 0018 on a populated install, with deliveries arriving
 * meanwhile: the service starts on a database holding 10^5 settled events (nine in ten with their
 * fact recorded, one in ten settled before facts were recorded), applies the migration, and its
 * workers carry every fact over in the background while a gateway keeps delivering. Every fact is
 * carried (as recorded, or read from its payload), and no acknowledged delivery is lost.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeliveryHistory, checkHistory, summarize } from '../fault/support/history.ts';
import { useTestDatabase } from '../support/database.ts';
import { migrateUpTo } from '../support/migrations.ts';
import { startTestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_fact_carry_over_system';
const ROWS = 100_000;
const database = useTestDatabase();

/**
 * What an install of the previous version holds: 10^5 processed Stripe events, two per charge (its
 * payment, then a partial refund), received over the last 60 days, their dedupe keys and payments.
 * Every tenth row was settled before facts were recorded: its fact is its payload's.
 */
async function populate(): Promise<void> {
  await database.sql.unsafe(`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, processed_at, fact, decision)
    select 'stripe', e.event_id, e.type, e.charge, e.payload, convert_to(e.payload::text, 'UTF8'), e.occurred_at, e.received_at, 'processed', e.received_at + interval '1 second',
      case when g % 10 = 0 then null else jsonb_build_object('chargeId', e.charge, 'status', e.status, 'occurredAt', to_char(e.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'amount', 2000, 'amountRefunded', e.refunded, 'currency', 'BRL') end,
      case when g % 10 = 0 then null else 'applied' end
    from generate_series(1, ${ROWS}) g,
      lateral (select 'evt_sys_' || g as event_id, 'ch_sys_' || (g + 1) / 2 as charge, case when g % 2 = 1 then 'charge.succeeded' else 'charge.refunded' end as type,
                      case when g % 2 = 1 then 'paid' else 'partially_refunded' end as status, case when g % 2 = 1 then 0 else 500 end as refunded,
                      timestamptz '2026-01-01T00:00:00Z' + g * interval '1 second' as occurred_at, now() - (g % 60) * interval '1 day' - interval '1 hour' as received_at) s,
      lateral (select s.*, jsonb_build_object('id', s.event_id, 'object', 'event', 'type', s.type, 'created', extract(epoch from s.occurred_at)::bigint,
        'data', jsonb_build_object('object', jsonb_build_object('id', s.charge, 'object', 'charge', 'amount', 2000, 'amount_refunded', s.refunded, 'captured', true,
          'currency', 'brl', 'payment_intent', null, 'refunded', false, 'status', 'succeeded'))) as payload) e`);
  await database.sql`insert into webhook_event_keys (provider, event_id, received_at) select provider, event_id, received_at from webhook_inbox`;
  await database.sql`
    insert into payments (provider, gateway_charge_id, status, amount, amount_refunded, currency, last_gateway_event_at, event_sequence)
    select 'stripe', 'ch_sys_' || c, 'partially_refunded', 2000, 500, 'BRL', timestamptz '2026-01-01T00:00:00Z' + 2 * c * interval '1 second', 2
    from generate_series(1, ${ROWS / 2}) c`;
}

const carryOverDone = async () => {
  const [row] = await database.sql`select finished_at from payment_facts_carry_over`;
  return row?.finished_at != null;
};

describe('migration 0018 at 10^5 rows (system tier)', () => {
  test('every fact is carried over in the background while deliveries go on; no acknowledged delivery is lost', { timeout: 900_000 }, async () => {
    await migrateUpTo(database, '0018_payment_facts');
    await populate();
    const service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET } });
    const [{ target }] = (await database.sql`select target_inbox_id::int as target from payment_facts_carry_over`) as unknown as [{ target: number }];
    assert.equal(target, ROWS);

    const history = new DeliveryHistory();
    let ackedWhileCarrying = 0;
    let sent = 0;
    let carrying = true;
    const poster = async (lane: number) => {
      while (carrying) {
        const id = `evt_live_${lane}_${sent++}`;
        const body = chargeEvent({ id, type: 'charge.succeeded', chargeId: `ch_live_${id}`, created: Math.floor(Date.now() / 1000) });
        const startedAt = Date.now();
        const outcome = await postStripe(service.baseUrl, body, SECRET).then(
          (r) => r.status,
          () => 'network_error' as const,
        );
        history.record({ eventId: id, startedAt, endedAt: Date.now(), outcome });
        if (outcome === 200 && !(await carryOverDone())) ackedWhileCarrying += 1;
      }
    };
    const posting = Promise.all([poster(1), poster(2)]);
    await waitFor(carryOverDone, { message: 'the carry-over to finish', timeoutMs: 600_000, intervalMs: 500 });
    carrying = false;
    await posting;
    assert.ok(ackedWhileCarrying > 0, 'deliveries were acknowledged while the carry-over ran');

    const [missing] = await database.sql`
      select count(*)::int as n from webhook_inbox w where w.id <= ${target}
        and not exists (select 1 from payment_facts f where f.provider = w.provider and f.event_id = w.event_id)`;
    assert.equal(missing!.n, 0, 'every settled event of the install has its fact');
    const [changed] = await database.sql`
      select count(*) filter (where w.fact is not null and f.fact <> w.fact)::int as recorded,
             count(*) filter (where w.fact is null and (f.fact->>'chargeId' <> w.resource_id or f.fact->>'status' <> case when w.event_type = 'charge.succeeded' then 'paid' else 'partially_refunded' end
               or (f.fact->>'amountRefunded')::int <> (w.payload->'data'->'object'->>'amount_refunded')::int))::int as from_payload,
             count(*)::int as carried
      from webhook_inbox w join payment_facts f using (provider, event_id) where w.id <= ${target}`;
    assert.deepEqual({ ...changed }, { recorded: 0, from_payload: 0, carried: ROWS });

    const acknowledged = [...history.acknowledged()];
    await waitFor(
      async () => {
        const [row] = await database.sql`select count(*)::int as n from payment_facts where event_id = any(${acknowledged}::text[])`;
        return row!.n === acknowledged.length;
      },
      { message: 'every acknowledged delivery processed, its fact kept', timeoutMs: 120_000 },
    );
    const rows = await database.sql`select event_id, count(*)::int as n from webhook_inbox where event_id like 'evt_live_%' group by 1`;
    const result = checkHistory(history, { rows: new Map(rows.map((r) => [r.event_id as string, r.n as number])) }, { allowedStatuses: [200] });
    console.log(`# ${summarize('deliveries during the carry-over', result)}; ${ackedWhileCarrying} acknowledged while it ran`);
    assert.deepEqual({ lost: result.lost, duplicated: result.duplicated, unexpected: result.unexpected }, { lost: [], duplicated: [], unexpected: [] });
    await service.stop();
  });
});
