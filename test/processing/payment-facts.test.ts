/**
 * payment_facts through the real service: every settled payment event's fact is kept with its
 * decision, refused ones too; purging and restoring payloads leave the facts as they are; a replay
 * that gives an event a new meaning (a new gateway snapshot) replaces its fact. Events are signed
 * by the official `stripe` SDK; the gateway's API is a fake one on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createArchiveWriter } from '../../src/operations/archive.ts';
import { replayEvents } from '../../src/operations/replay-events.ts';
import { restoreArchive } from '../../src/operations/restore.ts';
import { purgeEvents } from '../../src/operations/retention.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { setup } from '../support/setup.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { fixtureCharge } from '../support/stripe-objects.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { paymentOf, waitUntilSettled } from './harness.ts';

// `stripe` orders every kind by occurred_at (no API configured); `stripe-api` re-reads refunds and
// disputes from the fake API, as Stripe's defaults do.
const SECRET = 'whsec_payment_facts_stripe';
const API_SECRET = 'whsec_payment_facts_stripe_api';
const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;
let archiveDir: string;

setup(async () => {
  gateway = await startFakeGateway();
  archiveDir = await mkdtemp(path.join(tmpdir(), 'payment-facts-archive-'));
  const file = JSON.stringify({ providers: { stripe: { driver: 'stripe' }, 'stripe-api': { driver: 'stripe', api: { baseUrl: gateway.baseUrl } } } });
  service = await startTestService({
    database,
    env: {
      INBOX_CONFIG: '/inbox.json',
      WEBHOOK_SECRET_STRIPE: SECRET,
      WEBHOOK_SECRET_STRIPE_API: API_SECRET,
      GATEWAY_API_KEY_STRIPE_API: 'sk_test_payment_facts',
      INBOX_ARCHIVE_DIR: archiveDir,
    },
    files: { '/inbox.json': file },
  });
});

after(async () => {
  await gateway?.close();
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const now = () => Math.floor(Date.now() / 1000);

async function deliver(provider: 'stripe' | 'stripe-api', events: Array<{ id: string; body: string }>): Promise<void> {
  for (const { body } of events) {
    const response = await postStripe(service.baseUrl, body, provider === 'stripe' ? SECRET : API_SECRET, { provider });
    assert.equal(response.status, 200, await response.text());
  }
  await waitUntilSettled(
    database.sql,
    events.map((e) => e.id),
    20_000,
    provider,
  );
}

const event = (id: string, type: string, created: number, chargeId: string, fields: { amount?: number; amountRefunded?: number } = {}) => ({
  id,
  body: chargeEvent({ id, type, created, chargeId, ...fields }),
});

/** Every kept fact of these events, as payment_facts holds it. */
const keptFacts = (eventIds: string[]) => database.sql`
  select provider, event_id, inbox_id::int, event_type, payment_key, legacy_key, occurred_at, fact, decision, decision_detail, recorded_at
  from payment_facts where event_id = any(${eventIds}::text[]) order by event_id`;

const apiCharge = (id: string, amountRefunded: number) =>
  fixtureCharge({
    id,
    payment_intent: null,
    amount: 2000,
    amount_captured: 2000,
    amount_refunded: amountRefunded,
    captured: true,
    refunded: amountRefunded >= 2000,
    status: 'succeeded',
    currency: 'brl',
  });

describe('payment_facts', () => {
  test("each settled payment event's fact is kept with the decision its inbox row has (a snapshot as read); an event that is no payment's keeps none", async () => {
    gateway.resources.set('/v1/charges/ch_kept', apiCharge('ch_kept', 500));
    const t = now() - 3600;
    const events = [
      event('evt_kept_paid', 'charge.succeeded', t, 'ch_kept', { amount: 2000 }),
      event('evt_kept_refund', 'charge.refunded', t + 60, 'ch_kept', { amount: 2000, amountRefunded: 500 }),
      {
        id: 'evt_kept_customer',
        body: JSON.stringify({
          id: 'evt_kept_customer',
          object: 'event',
          type: 'customer.created',
          created: t,
          data: { object: { id: 'cus_1', object: 'customer' } },
        }),
      },
    ];
    await deliver('stripe-api', events);
    const rows = await database.sql`
      select w.id::int as inbox_id, w.event_id, w.event_type, w.occurred_at, w.fact, w.decision, w.decision_detail, w.processed_at
      from webhook_inbox w where w.provider = 'stripe-api' and w.event_id = any(${events.map((e) => e.id)}::text[]) order by w.event_id`;
    const kept = await keptFacts(events.map((e) => e.id));
    assert.deepEqual(
      kept.map((k) => k.event_id),
      ['evt_kept_paid', 'evt_kept_refund'],
      "customer.created is no payment's event",
    );
    for (const fact of kept) {
      const row = rows.find((r) => r.event_id === fact.event_id)!;
      assert.deepEqual(
        {
          inbox_id: fact.inbox_id,
          event_type: fact.event_type,
          occurred_at: fact.occurred_at,
          fact: fact.fact,
          decision: fact.decision,
          decision_detail: fact.decision_detail,
        },
        {
          inbox_id: row.inbox_id,
          event_type: row.event_type,
          occurred_at: row.occurred_at,
          fact: row.fact,
          decision: row.decision,
          decision_detail: row.decision_detail,
        },
      );
      assert.equal(fact.payment_key, 'ch_kept');
      assert.ok(Math.abs(fact.recorded_at.getTime() - row.processed_at.getTime()) < 1000, 'written when the row was settled');
    }
    const refund = kept.find((k) => k.event_id === 'evt_kept_refund')!;
    assert.equal(refund.decision, 'refetched');
    assert.deepEqual([refund.fact.snapshot, refund.fact.amountRefunded], [true, 500], "the gateway's answer, which no payload holds");
  });

  test('an event whose fact is refused keeps its decision and its fact after its payload is purged; a restore brings the rows back and adds no fact', async () => {
    const t = now() - 7200;
    await deliver('stripe', [
      // More refunded than charged, before any payment: refused for its amounts, no payment made.
      event('evt_refused_amount', 'charge.refunded', t, 'ch_refused_amount', { amount: 100, amountRefunded: 900 }),
      event('evt_refused_paid', 'charge.succeeded', t, 'ch_refused_transition', { amount: 800 }),
      event('evt_refused_refund', 'charge.refunded', t + 60, 'ch_refused_transition', { amount: 800, amountRefunded: 800 }),
      // A dispute on a refunded charge: refunded is terminal, the transition is refused.
      event('evt_refused_dispute', 'charge.dispute.created', t + 120, 'ch_refused_transition', { amount: 800 }),
    ]);
    const ids = ['evt_refused_amount', 'evt_refused_dispute', 'evt_refused_paid', 'evt_refused_refund'];
    const before = await keptFacts(ids);
    assert.deepEqual(
      before.map((k) => [k.event_id, k.decision]),
      [
        ['evt_refused_amount', 'rejected_amount'],
        ['evt_refused_dispute', 'rejected_transition'],
        ['evt_refused_paid', 'applied'],
        ['evt_refused_refund', 'applied'],
      ],
    );
    assert.equal(await paymentOf(database.sql, 'ch_refused_amount'), undefined, 'no payment was made of the refused refund');
    assert.deepEqual(before[0]!.decision_detail, { status: 'refunded', amount: 100, amountRefunded: 900, occurredAt: new Date(t * 1000).toISOString() });

    const purged = await purgeEvents(
      { db: service.database.db, archive: createArchiveWriter({ clock: () => new Date() }) },
      { provider: 'stripe', cutoff: new Date(Date.now() + 1000), archiveDir },
    );
    assert.ok(purged.deleted >= ids.length);
    const [left] = await database.sql`select count(*)::int as n from webhook_inbox where event_id = any(${ids}::text[])`;
    assert.equal(left!.n, 0, 'the payloads are gone');
    assert.deepEqual(await keptFacts(ids), before, 'the facts are as they were');

    for (const { file } of purged.files) await restoreArchive(service.database.db, file);
    const [back] = await database.sql`select count(*)::int as n from webhook_inbox where event_id = any(${ids}::text[])`;
    assert.equal(back!.n, ids.length, 'the rows are back');
    assert.deepEqual(await keptFacts(ids), before, 'a restore adds no fact and changes none');
  });

  test("a replay that reads a new snapshot replaces the event's fact, never adds a second", async () => {
    const t = now() - 600;
    gateway.resources.set('/v1/charges/ch_replayed', apiCharge('ch_replayed', 500));
    await deliver('stripe-api', [
      event('evt_replayed_paid', 'charge.succeeded', t, 'ch_replayed', { amount: 2000 }),
      event('evt_replayed_refund_1', 'charge.refunded', t + 60, 'ch_replayed', { amount: 2000, amountRefunded: 500 }),
      // Read again: the gateway says what the payment already is: nothing changed, ignored.
      event('evt_replayed_refund_2', 'charge.refunded', t + 120, 'ch_replayed', { amount: 2000, amountRefunded: 500 }),
    ]);
    const [first] = await keptFacts(['evt_replayed_refund_2']);
    assert.deepEqual([first!.decision, first!.fact.amountRefunded], ['refetched', 500]);

    gateway.resources.set('/v1/charges/ch_replayed', apiCharge('ch_replayed', 2000));
    const replay = await replayEvents(
      { db: service.database.db, boss: service.boss },
      { provider: 'stripe-api', eventIds: ['evt_replayed_refund_2'], statuses: ['ignored'] },
    );
    assert.equal(replay.replayed, 1);
    await waitUntilSettled(database.sql, ['evt_replayed_refund_2'], 20_000, 'stripe-api');
    const kept = await keptFacts(['evt_replayed_refund_2']);
    assert.equal(kept.length, 1);
    assert.deepEqual([kept[0]!.fact.status, kept[0]!.fact.amountRefunded, kept[0]!.decision_detail.changed], ['refunded', 2000, true]);
    assert.ok(kept[0]!.recorded_at > first!.recorded_at);
    assert.equal((await paymentOf(database.sql, 'ch_replayed', 'stripe-api'))?.status, 'refunded');
  });
});
