/**
 * Migration 0018 on an install that already holds settled events: the facts recorded on its inbox
 * rows (and, for rows settled before facts were recorded, their payloads read again) are carried
 * into payment_facts in the background, range by range. Until they are, the fold still reads them
 * where they are and retention leaves their rows alone. The 10^5-row version, with deliveries
 * arriving meanwhile, is test/system/fact-carry-over.system.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { AppConfig } from '../../src/config/load-config.ts';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createArchiveWriter } from '../../src/operations/archive.ts';
import { dropExpiredPartitions } from '../../src/operations/partition-retention.ts';
import { purgeEvents } from '../../src/operations/retention.ts';
import { createBuiltInHandlers } from '../../src/processing/built-in-handlers.ts';
import { type CarriedRange, carryOverNextRange } from '../../src/processing/fact-carry-over.ts';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { processBatch } from '../../src/processing/process-batch.ts';
import { paymentOf, storeEvent } from '../processing/harness.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { migrateUpTo } from '../support/migrations.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent } from '../support/stripe.ts';

const database = useTestDatabase();
let handle: DatabaseHandle;
let config: AppConfig;
let archiveDir: string;

setup(async () => {
  handle = database.connect('fact-carry-over-test', 4);
  archiveDir = await mkdtemp(path.join(tmpdir(), 'fact-carry-over-'));
  config = testConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_fact_carry_over', INBOX_ARCHIVE_DIR: archiveDir });
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const t0 = Math.floor(Date.now() / 1000) - 3600;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** What the previous version kept: inbox rows with the fact they were processed with (or none), and their payments. */
const before = [
  {
    eventId: 'evt_cv_paid',
    body: chargeEvent({ id: 'evt_cv_paid', type: 'charge.succeeded', chargeId: 'ch_cv', created: t0, amount: 2000 }),
    status: 'processed',
    fact: { chargeId: 'ch_cv', status: 'paid', occurredAt: iso(t0), amount: 2000, amountRefunded: 0, currency: 'BRL' },
    decision: 'applied',
  },
  {
    // Re-read from the gateway when processed: its fact is the gateway's answer (refunded in full), not its payload (500).
    eventId: 'evt_cv_refund',
    body: chargeEvent({ id: 'evt_cv_refund', type: 'charge.refunded', chargeId: 'ch_cv', created: t0 + 60, amount: 2000, amountRefunded: 500 }),
    status: 'processed',
    fact: {
      chargeId: 'ch_cv',
      status: 'refunded',
      occurredAt: new Date((t0 + 90) * 1000 + 500).toISOString(),
      amount: 2000,
      amountRefunded: 2000,
      currency: 'BRL',
      snapshot: true,
    },
    decision: 'refetched',
  },
  // Settled before facts were recorded: its fact is its payload, read by the driver.
  {
    eventId: 'evt_cv_old',
    body: chargeEvent({ id: 'evt_cv_old', type: 'charge.succeeded', chargeId: 'ch_cv_old', created: t0, amount: 700 }),
    status: 'processed',
    fact: null,
    decision: null,
  },
  {
    eventId: 'evt_cv_customer',
    body: JSON.stringify({ id: 'evt_cv_customer', type: 'customer.created', created: t0, data: { object: { id: 'cus_1' } } }),
    status: 'ignored',
    fact: null,
    decision: 'not_a_payment_event',
  },
  {
    eventId: 'evt_cv_pending',
    body: chargeEvent({ id: 'evt_cv_pending', type: 'charge.succeeded', chargeId: 'ch_cv_pending', created: t0 }),
    status: 'pending',
    fact: null,
    decision: null,
  },
];

async function populate(): Promise<void> {
  for (const row of before) {
    const payload = JSON.parse(row.body) as { type: string; data: { object: { id: string } } };
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, processed_at, fact, decision)
      values ('stripe', ${row.eventId}, ${payload.type}, ${payload.data.object.id}, ${row.body}::text::jsonb, ${Buffer.from(row.body)}, ${new Date(t0 * 1000)},
              now() - interval '1 hour', ${row.status}, ${row.status === 'pending' ? null : new Date()}, ${row.fact === null ? null : JSON.stringify(row.fact)}::text::jsonb, ${row.decision})`;
  }
  // A provider this configuration no longer has: its payload cannot be read.
  await database.sql`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, processed_at)
    values ('gone', 'evt_cv_gone', 'charge.succeeded', 'ch_gone', '{}', '\\x7b7d', now(), now() - interval '1 hour', 'processed', now())`;
  await database.sql`insert into webhook_event_keys (provider, event_id, received_at) select provider, event_id, received_at from webhook_inbox`;
  await database.sql`
    insert into payments (provider, gateway_charge_id, status, amount, amount_refunded, currency, last_gateway_event_at, event_sequence)
    values ('stripe', 'ch_cv', 'refunded', 2000, 2000, 'BRL', ${new Date((t0 + 90) * 1000 + 500)}, 2), ('stripe', 'ch_cv_old', 'paid', 700, 0, 'BRL', ${new Date(t0 * 1000)}, 1),
           -- Its events were purged by the previous version, and their facts with them.
           ('stripe', 'ch_cv_purged', 'refunded', 1035, 1035, 'BRL', ${new Date((t0 + 60) * 1000)}, 2)`;
}

async function deliver(body: string): Promise<void> {
  const event = JSON.parse(body) as { id: string; type: string; created: number; data: { object: { charge?: string; id: string } } };
  const inboxId = await storeEvent(database.sql, {
    eventId: event.id,
    type: event.type,
    chargeId: event.data.object.charge ?? event.data.object.id,
    created: event.created,
    body,
  });
  const deps = { db: handle.db, providers: config.providers, handlers: createHandlerRegistry(createBuiltInHandlers({})) };
  for (const result of await processBatch(deps, [{ inboxId }])) if ('error' in result) throw result.error;
}

const keptFacts = () => database.sql`select event_id, inbox_id::int, payment_key, fact, decision, recorded_at from payment_facts order by event_id`;
const dropThisMonth = () =>
  dropExpiredPartitions(
    { db: handle.db, archive: createArchiveWriter({ clock: () => new Date() }) },
    {
      providers: [
        { name: 'stripe', retentionDays: 30 },
        { name: 'gone', retentionDays: 30 },
      ],
      now: new Date(Date.now() + 120 * 86_400_000),
      archiveDir,
    },
  );

describe('carrying facts over (migration 0018)', () => {
  test('until the carry-over reaches a row, the fold reads its fact where it is and retention leaves it; then it is in payment_facts as it was recorded, or as its payload reads', async () => {
    await migrateUpTo(database, '0018_payment_facts');
    await populate();
    await applyMigrations(database.url);
    const [{ max }] = (await database.sql`select max(id)::int as max from webhook_inbox`) as unknown as [{ max: number }];
    const [progress] =
      await database.sql`select target_inbox_id::int as target, carried_through_inbox_id::int as carried, finished_at from payment_facts_carry_over`;
    assert.deepEqual({ ...progress }, { target: max, carried: 0, finished_at: null });

    // A late dispute of the refunded charge, before anything is carried: the fold still knows the refund.
    await deliver(chargeEvent({ id: 'evt_cv_dispute', type: 'charge.dispute.created', chargeId: 'ch_cv', created: t0 + 86_400, amount: 2000 }));
    assert.deepEqual([(await paymentOf(database.sql, 'ch_cv'))?.status, (await paymentOf(database.sql, 'ch_cv'))?.amountRefunded], ['refunded', 2000]);
    const [dispute] = await database.sql`select decision from webhook_inbox where event_id = 'evt_cv_dispute'`;
    assert.equal(dispute!.decision, 'rejected_transition');

    // A payment whose history the previous version purged goes on from its row, not from nothing.
    await deliver(chargeEvent({ id: 'evt_cv_purged_dispute', type: 'charge.dispute.created', chargeId: 'ch_cv_purged', created: t0 + 86_400, amount: 1035 }));
    assert.deepEqual(
      [(await paymentOf(database.sql, 'ch_cv_purged'))?.status, (await paymentOf(database.sql, 'ch_cv_purged'))?.amountRefunded],
      ['refunded', 1035],
    );
    const [purgedRow] =
      await database.sql`select checkpoint->>'status' as status, checkpoint->>'amountRefunded' as refunded from payments where gateway_charge_id = 'ch_cv_purged'`;
    assert.deepEqual({ ...purgedRow }, { status: 'refunded', refunded: '1035' }, 'its row kept as its checkpoint');

    const purged = await purgeEvents(
      { db: handle.db, archive: createArchiveWriter({ clock: () => new Date() }) },
      { provider: 'stripe', cutoff: new Date(Date.now() - 60_000), archiveDir },
    );
    assert.equal(purged.deleted, 0, 'no row whose fact is not carried yet is purged');
    const kept = await dropThisMonth();
    assert.ok(kept.kept.some((k) => k.blocking >= 5) && kept.dropped.every((d) => d.rows === 0), `the month stays whole: ${JSON.stringify(kept)}`);

    // Two instances carrying at once, two ids a range: they take turns.
    const carry = async (): Promise<CarriedRange[]> => {
      const ranges: CarriedRange[] = [];
      for (;;) {
        const range = await carryOverNextRange({ db: handle.db, providers: config.providers, idsPerBatch: 2 });
        ranges.push(range);
        if (range.finished) return ranges;
      }
    };
    const ranges = (await Promise.all([carry(), carry()])).flat();
    assert.equal(
      ranges.reduce((n, r) => n + r.unreadable, 0),
      1,
      'the row of a provider no longer configured',
    );
    assert.equal(
      ranges.reduce((n, r) => n + r.facts, 0),
      3,
    );
    const facts = await keptFacts();
    const inbox = new Map((await database.sql`select event_id, id::int, processed_at from webhook_inbox`).map((r) => [r.event_id as string, r]));
    assert.deepEqual(
      facts.map((f) => [f.event_id, f.payment_key, f.decision]),
      [
        ['evt_cv_dispute', 'ch_cv', 'rejected_transition'],
        ['evt_cv_old', 'ch_cv_old', null],
        ['evt_cv_paid', 'ch_cv', 'applied'],
        ['evt_cv_purged_dispute', 'ch_cv_purged', 'rejected_transition'],
        ['evt_cv_refund', 'ch_cv', 'refetched'],
      ],
    );
    for (const fact of facts) {
      assert.equal(fact.inbox_id, inbox.get(fact.event_id)!.id);
      assert.equal(fact.recorded_at.getTime(), inbox.get(fact.event_id)!.processed_at.getTime(), `${fact.event_id}: recorded when it was settled`);
    }
    for (const row of before.filter((r) => r.fact !== null))
      assert.deepEqual(facts.find((f) => f.event_id === row.eventId)!.fact, row.fact, `${row.eventId}: as recorded`);
    assert.deepEqual(facts.find((f) => f.event_id === 'evt_cv_old')!.fact, {
      chargeId: 'ch_cv_old',
      status: 'paid',
      occurredAt: iso(t0),
      amount: 700,
      amountRefunded: 0,
      currency: 'BRL',
    });
    const [done] = await database.sql`select carried_through_inbox_id::int as carried, finished_at from payment_facts_carry_over`;
    assert.ok(done!.carried === max && done!.finished_at !== null);

    // Carried: the rows may go, their facts stay and the fold reads them there.
    const purgedNow = await purgeEvents(
      { db: handle.db, archive: createArchiveWriter({ clock: () => new Date() }) },
      { provider: 'stripe', cutoff: new Date(Date.now() + 1000), archiveDir },
    );
    assert.equal(purgedNow.deleted, 6, 'every settled stripe row, the disputes too');
    assert.equal((await keptFacts()).length, 5);
    await deliver(
      chargeEvent({ id: 'evt_cv_lost', type: 'charge.dispute.closed', chargeId: 'ch_cv', created: t0 + 30 * 86_400, amount: 2000, disputeStatus: 'lost' }),
    );
    assert.deepEqual([(await paymentOf(database.sql, 'ch_cv'))?.status, (await paymentOf(database.sql, 'ch_cv'))?.amountRefunded], ['refunded', 2000]);
  });
});
