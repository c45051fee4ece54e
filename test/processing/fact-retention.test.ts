/**
 * Past its facts (docs/payment-history.md): a payment quiet for its provider's keyRetentionDays
 * has its facts pruned by the daily retention run, and keeps what they folded to as its
 * checkpoint; a later event folds from the checkpoint, never from nothing. Events are processed
 * in-process by the workers' own code; the retention run is the daily job's, at a `now` that many
 * days on (its clock is injected), or at today's with one payment's facts recorded long ago.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import type { DatabaseHandle } from '../../src/db/client.ts';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/domain/payments/checkpoint.ts';
import type { PaymentState } from '../../src/domain/payments/fold.ts';
import { createArchiveWriter } from '../../src/operations/archive.ts';
import { type RetentionRun, applyRetention } from '../../src/operations/retention.ts';
import { createBuiltInHandlers } from '../../src/processing/built-in-handlers.ts';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { type ProcessingDeps, processBatch } from '../../src/processing/process-batch.ts';
import type { AppConfig } from '../../src/config/load-config.ts';
import type { ScenarioEvent } from '../domain/charge-scenarios.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { fixtureEventBody, fixturePaymentIntent } from '../support/stripe-objects.ts';
import { type ChargeEventOptions, chargeEvent } from '../support/stripe.ts';
import { outboundEventsOf, paymentOf, storeEvent } from './harness.ts';

const DAY = 86_400;
const database = useTestDatabase();
let handle: DatabaseHandle;
let config: AppConfig;
let deps: ProcessingDeps;
let archiveDir: string;

setup(async () => {
  handle = database.connect('fact-retention-test', 4);
  archiveDir = await mkdtemp(path.join(tmpdir(), 'fact-retention-archive-'));
  // `stripe` creates its payments; `shop` (the same driver) waits for the application's row.
  const file = JSON.stringify({ providers: { stripe: { driver: 'stripe' }, shop: { driver: 'stripe', unknownPayment: 'require' } } });
  config = testConfig(
    {
      INBOX_CONFIG: '/inbox.json',
      WEBHOOK_SECRET_STRIPE: 'whsec_fact_retention',
      WEBHOOK_SECRET_SHOP: 'whsec_fact_retention_shop',
      INBOX_ARCHIVE_DIR: archiveDir,
    },
    { '/inbox.json': file },
  );
  deps = { db: handle.db, providers: config.providers, handlers: createHandlerRegistry(createBuiltInHandlers({})) };
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

const charge = (id: string, type: string, created: number, fields: Omit<ChargeEventOptions, 'id' | 'type' | 'created'>): ScenarioEvent => ({
  eventId: id,
  type,
  chargeId: fields.paymentIntent ?? fields.chargeId,
  created,
  body: chargeEvent({ id, type, created, ...fields }),
});

/** Stores each event as the receiver does and processes it as a worker does, one after the other. */
async function deliver(events: readonly ScenarioEvent[], provider = 'stripe'): Promise<void> {
  for (const event of events) {
    const inboxId = await storeEvent(database.sql, event, provider);
    for (const result of await processBatch(deps, [{ inboxId }])) if ('error' in result) throw result.error;
  }
}

async function retentionRun(daysFromNow: number): Promise<RetentionRun> {
  const now = new Date(Date.now() + daysFromNow * DAY * 1000);
  return applyRetention({ db: handle.db, archive: createArchiveWriter({ clock: () => now }) }, { providers: config.providers, now, archiveDir });
}

async function factsOf(provider: string, key: string): Promise<number> {
  const [row] = await database.sql`select count(*)::int as n from payment_facts where provider = ${provider} and payment_key = ${key}`;
  return row!.n;
}

async function checkpointOf(provider: string, key: string): Promise<PaymentState | null> {
  const [row] = await database.sql`select checkpoint from payments where provider = ${provider} and gateway_charge_id = ${key}`;
  return decodeCheckpoint(row?.checkpoint ?? null);
}

async function decisionOf(eventId: string, provider = 'stripe'): Promise<string | null> {
  const [row] = await database.sql`select decision from webhook_inbox where provider = ${provider} and event_id = ${eventId}`;
  return row?.decision ?? null;
}

describe('fact retention', () => {
  test('a payment quiet past keyRetentionDays keeps what its facts fold to as its checkpoint, and they go; an active payment keeps its facts; refused facts of a charge that never became a payment go', async () => {
    const t0 = Math.floor(Date.now() / 1000) - 3 * DAY;
    await deliver([
      charge('evt_quiet_paid', 'charge.succeeded', t0, { chargeId: 'ch_quiet', amount: 5000 }),
      charge('evt_quiet_refund', 'charge.refunded', t0 + 60, { chargeId: 'ch_quiet', amount: 5000, amountRefunded: 300 }),
      charge('evt_active_paid', 'charge.succeeded', t0, { chargeId: 'ch_active', amount: 700 }),
      charge('evt_active_refund', 'charge.refunded', t0 + 60, { chargeId: 'ch_active', amount: 700, amountRefunded: 70 }),
      // More refunded than charged: refused (rejected_amount), and no payment is made of it.
      charge('evt_never_refund', 'charge.refunded', t0, { chargeId: 'ch_never', amount: 100, amountRefunded: 900 }),
    ]);
    assert.equal(await decisionOf('evt_never_refund'), 'rejected_amount');
    // Their facts were written 401 days ago (the payment's quiet time is what retention reads); the
    // active payment's first one too, but its refund is news of today.
    await database.sql`update payment_facts set recorded_at = now() - interval '401 days' where payment_key in ('ch_quiet', 'ch_never') or event_id = 'evt_active_paid'`;

    const run = await retentionRun(0);
    assert.deepEqual(run.providers.find((p) => p.provider === 'stripe')!.facts, { checkpointed: 1, withoutPayment: 1, active: 1, factsDeleted: 3 });
    const [row] = await database.sql`
      select status, amount::float8 as amount, amount_refunded::float8 as "amountRefunded", currency, last_gateway_event_at as "lastGatewayEventAt",
        inquiry_open as "inquiryOpen", status_before_dispute as "statusBeforeDispute", split
      from payments where provider = 'stripe' and gateway_charge_id = 'ch_quiet'`;
    assert.deepEqual(await checkpointOf('stripe', 'ch_quiet'), { ...row }, 'the checkpoint is the payment as its facts fold, every field of its state');
    assert.deepEqual([await factsOf('stripe', 'ch_quiet'), await factsOf('stripe', 'ch_never'), await factsOf('stripe', 'ch_active')], [0, 0, 2]);
    assert.equal(await checkpointOf('stripe', 'ch_active'), null);
    const [inbox] = await database.sql`select count(*)::int as n from webhook_inbox where event_id like 'evt_quiet_%'`;
    assert.equal(inbox!.n, 2, 'fact retention leaves payloads to payload retention');
  });

  test('past even that, the three stories fold from the checkpoint: a late dispute never moves a refund, a lost dispute keeps the refund, an old event is stale', async () => {
    const t0 = Math.floor(Date.now() / 1000) - 60 * DAY;
    const history = [
      charge('evt_cp_1_paid', 'charge.succeeded', t0, { chargeId: 'ch_cp_refunded', amount: 1035 }),
      charge('evt_cp_1_refund', 'charge.refunded', t0 + 60, { chargeId: 'ch_cp_refunded', amount: 1035, amountRefunded: 1035 }),
      charge('evt_cp_2_paid', 'charge.succeeded', t0, { chargeId: 'ch_cp_partial', amount: 2000 }),
      charge('evt_cp_2_refund', 'charge.refunded', t0 + 60, { chargeId: 'ch_cp_partial', amount: 2000, amountRefunded: 150 }),
      charge('evt_cp_3_paid', 'charge.succeeded', t0, { chargeId: 'ch_cp_intent', paymentIntent: 'pi_cp_intent', amount: 3000 }),
      charge('evt_cp_3_refund', 'charge.refunded', t0 + 60, { chargeId: 'ch_cp_intent', paymentIntent: 'pi_cp_intent', amount: 3000, amountRefunded: 100 }),
    ];
    await deliver(history);
    const told = async () =>
      (await Promise.all(['ch_cp_refunded', 'ch_cp_partial', 'pi_cp_intent'].map((key) => outboundEventsOf(database.sql, key)))).map((e) => e.length);
    const toldBefore = await told();

    // 401 days on: payloads, dedupe keys and facts all past their windows.
    const run = await retentionRun(401);
    assert.equal(run.providers.find((p) => p.provider === 'stripe')!.facts.checkpointed >= 3, true);
    for (const key of ['ch_cp_refunded', 'ch_cp_partial', 'pi_cp_intent']) assert.equal(await factsOf('stripe', key), 0, `${key}'s facts pruned`);
    const [left] = await database.sql`select count(*)::int as n from webhook_event_keys where event_id like 'evt_cp_%'`;
    assert.equal(left!.n, 0, 'their dedupe keys are gone too: a resend is stored as new');

    const intent = fixturePaymentIntent({
      id: 'pi_cp_intent',
      amount: 3000,
      amount_received: 3000,
      currency: 'brl',
      status: 'succeeded',
      latest_charge: 'ch_cp_intent',
    });
    await deliver([
      charge('evt_cp_1_dispute', 'charge.dispute.created', t0 + 200 * DAY, { chargeId: 'ch_cp_refunded', amount: 1035 }),
      history[1]!,
      charge('evt_cp_2_dispute', 'charge.dispute.created', t0 + 200 * DAY, { chargeId: 'ch_cp_partial', amount: 2000 }),
      charge('evt_cp_2_lost', 'charge.dispute.closed', t0 + 260 * DAY, { chargeId: 'ch_cp_partial', amount: 2000, disputeStatus: 'lost' }),
      {
        eventId: 'evt_cp_3_intent',
        type: 'payment_intent.succeeded',
        chargeId: 'pi_cp_intent',
        created: t0 - 5,
        body: fixtureEventBody('evt_cp_3_intent', 'payment_intent.succeeded', t0 - 5, intent),
      },
    ]);
    const state = async (key: string) => {
      const p = await paymentOf(database.sql, key);
      return { status: p?.status, amount: p?.amount, amountRefunded: p?.amountRefunded };
    };
    assert.deepEqual(await state('ch_cp_refunded'), { status: 'refunded', amount: 1035, amountRefunded: 1035 });
    assert.deepEqual(await state('ch_cp_partial'), { status: 'charged_back', amount: 2000, amountRefunded: 150 });
    assert.deepEqual(await state('pi_cp_intent'), { status: 'partially_refunded', amount: 3000, amountRefunded: 100 });
    assert.deepEqual(
      [await decisionOf('evt_cp_1_dispute'), await decisionOf('evt_cp_1_refund'), await decisionOf('evt_cp_2_lost'), await decisionOf('evt_cp_3_intent')],
      ['rejected_transition', 'stale', 'applied', 'stale'],
      'a resend of a pruned event, and an event older than the checkpoint, are no news',
    );
    assert.deepEqual(
      await told(),
      [toldBefore[0], toldBefore[1]! + 2, toldBefore[2]],
      'the application hears of the dispute and its loss, and of nothing else',
    );
    const lastTold = (await outboundEventsOf(database.sql, 'ch_cp_partial')).at(-1)!;
    assert.deepEqual([lastTold.status, lastTold.amountRefunded], ['charged_back', 150]);
  });

  test("require mode: the checkpoint stands in for the application's row; a late pending never demotes it, a late dispute applies", async () => {
    const t0 = Math.floor(Date.now() / 1000) - 10 * DAY;
    await database.sql`insert into payments (provider, gateway_charge_id, status, amount, currency) values ('shop', 'ch_shop', 'pending', 4000, 'BRL')`;
    await deliver([charge('evt_shop_paid', 'charge.succeeded', t0, { chargeId: 'ch_shop', amount: 4000 })], 'shop');
    await retentionRun(401);
    assert.equal((await checkpointOf('shop', 'ch_shop'))?.status, 'paid');
    assert.equal(await factsOf('shop', 'ch_shop'), 0);
    await deliver(
      [
        charge('evt_shop_pending', 'charge.pending', t0 - 60, { chargeId: 'ch_shop', amount: 4000 }),
        charge('evt_shop_dispute', 'charge.dispute.created', t0 + 30 * DAY, { chargeId: 'ch_shop', amount: 4000 }),
      ],
      'shop',
    );
    assert.deepEqual([await decisionOf('evt_shop_pending', 'shop'), await decisionOf('evt_shop_dispute', 'shop')], ['stale', 'applied']);
    assert.equal((await paymentOf(database.sql, 'ch_shop', 'shop'))?.status, 'disputed');
  });
});

describe('a checkpoint', () => {
  test('keeps every field of the payment state, a field this version does not name too, and its dates as dates', () => {
    const state: PaymentState = {
      status: 'disputed',
      amount: 2000,
      amountRefunded: 150,
      currency: 'BRL',
      lastGatewayEventAt: new Date('2026-01-02T03:04:05.678Z'),
      inquiryOpen: false,
      statusBeforeDispute: 'partially_refunded',
      split: null,
    };
    const withMore = { ...state, reviewedAt: { by: 'acquirer', at: new Date('2026-01-01T00:00:00Z') } };
    assert.deepEqual(decodeCheckpoint(JSON.parse(encodeCheckpoint(state))), state);
    const stored = JSON.parse(encodeCheckpoint(withMore as PaymentState)) as unknown;
    assert.deepEqual(decodeCheckpoint(stored), withMore);
    assert.equal(decodeCheckpoint(null), null);
    assert.throws(() => decodeCheckpoint({ status: 'teleported', amountRefunded: 0 }), /no payment state this version can read/);
  });
});
