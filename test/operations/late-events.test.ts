/**
 * Issue 28's three stories, end to end: a payment's history over HTTP (signed by the official
 * `stripe` SDK), its payloads removed by a real `inboxctl purge` or by a retention run that drops
 * their month, then a late event. The payment ends where its whole history leads, and the
 * application (a consumer verifying with `standardwebhooks`) is never told that a refunded payment
 * became something else, or that a refunded amount went down.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { createArchiveWriter } from '../../src/operations/archive.ts';
import { applyRetention } from '../../src/operations/retention.ts';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { type Consumer, type ReceivedEvent, applyBySequence, startConsumer } from '../delivery/support/consumer.ts';
import { newDestinationSecret } from '../delivery/support/lanes.ts';
import { paymentOf, waitUntilSettled } from '../processing/harness.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { fixtureEventBody, fixturePaymentIntent } from '../support/stripe-objects.ts';
import { type ChargeEventOptions, chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_late_events_after_retention';
const DAY = 86_400;
const database = useTestDatabase();
let consumer: Consumer;
let service: TestService;
let archiveDir: string;
let env: Record<string, string>;

setup(async () => {
  database.onTeardown(() => consumer?.close());
  archiveDir = await mkdtemp(path.join(tmpdir(), 'late-events-archive-'));
  const destinationSecret = newDestinationSecret();
  consumer = await startConsumer(destinationSecret);
  env = { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ARCHIVE_DIR: archiveDir };
  service = await startTestService({ database, env: { ...env, DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: destinationSecret } });
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

interface Sent {
  eventId: string;
  body: string;
}

async function deliver(events: readonly Sent[]): Promise<void> {
  for (const { body } of events) {
    const response = await postStripe(service.baseUrl, body, SECRET);
    assert.equal(response.status, 200, await response.text());
  }
  await waitUntilSettled(
    database.sql,
    events.map((e) => e.eventId),
    30_000,
  );
}

const charge = (id: string, type: string, created: number, fields: Omit<ChargeEventOptions, 'id' | 'type' | 'created'>): Sent => ({
  eventId: id,
  body: chargeEvent({ id, type, created, ...fields }),
});

/** The three stories for one run (`tag` keeps their keys apart), each: history, then the late events. */
function stories(tag: string, t0: number) {
  const refunded = `ch_${tag}_refunded`;
  const partial = `ch_${tag}_partial`;
  const intent = `pi_${tag}_intent`;
  return [
    {
      name: 'paid → refunded (1,035 of 1,035) → dispute created',
      key: refunded,
      history: [
        charge(`evt_${tag}_1_paid`, 'charge.succeeded', t0, { chargeId: refunded, amount: 1035 }),
        charge(`evt_${tag}_1_refund`, 'charge.refunded', t0 + 60, { chargeId: refunded, amount: 1035, amountRefunded: 1035 }),
      ],
      late: [charge(`evt_${tag}_1_dispute`, 'charge.dispute.created', t0 + 10 * DAY, { chargeId: refunded, amount: 1035 })],
      expected: { status: 'refunded', amount: 1035, amountRefunded: 1035 },
      lateDecisions: ['rejected_transition'],
    },
    {
      name: 'paid → partial refund 150 → dispute created, closed lost',
      key: partial,
      history: [
        charge(`evt_${tag}_2_paid`, 'charge.succeeded', t0, { chargeId: partial, amount: 2000 }),
        charge(`evt_${tag}_2_refund`, 'charge.refunded', t0 + 60, { chargeId: partial, amount: 2000, amountRefunded: 150 }),
      ],
      late: [
        charge(`evt_${tag}_2_dispute`, 'charge.dispute.created', t0 + 10 * DAY, { chargeId: partial, amount: 2000 }),
        charge(`evt_${tag}_2_lost`, 'charge.dispute.closed', t0 + 40 * DAY, { chargeId: partial, amount: 2000, disputeStatus: 'lost' }),
      ],
      expected: { status: 'charged_back', amount: 2000, amountRefunded: 150 },
      lateDecisions: ['applied', 'applied'],
    },
    {
      name: 'paid → partial refund 100 → a late payment_intent.succeeded (older created)',
      key: intent,
      history: [
        charge(`evt_${tag}_3_paid`, 'charge.succeeded', t0, { chargeId: `ch_${tag}_intent`, paymentIntent: intent, amount: 3000 }),
        charge(`evt_${tag}_3_refund`, 'charge.refunded', t0 + 60, { chargeId: `ch_${tag}_intent`, paymentIntent: intent, amount: 3000, amountRefunded: 100 }),
      ],
      late: [
        {
          eventId: `evt_${tag}_3_intent`,
          body: fixtureEventBody(
            `evt_${tag}_3_intent`,
            'payment_intent.succeeded',
            t0 - 5,
            fixturePaymentIntent({ id: intent, amount: 3000, amount_received: 3000, currency: 'brl', status: 'succeeded', latest_charge: `ch_${tag}_intent` }),
          ),
        },
      ],
      expected: { status: 'partially_refunded', amount: 3000, amountRefunded: 100 },
      lateDecisions: ['stale'],
    },
  ];
}

type Story = ReturnType<typeof stories>[number];

/** Every change the consumer was sent for the payment, once its row's last one has arrived. */
async function deliveredFor(key: string): Promise<ReceivedEvent[]> {
  return waitFor(
    async () => {
      const [row] = await database.sql`select event_sequence from payments where provider = 'stripe' and gateway_charge_id = ${key}`;
      const { applied } = applyBySequence(consumer.acceptedFor(key));
      return row && applied.length === row.event_sequence ? applied : undefined;
    },
    { message: `every change of ${key} delivered` },
  );
}

async function assertTold(story: Story): Promise<void> {
  const payment = await paymentOf(database.sql, story.key);
  assert.deepEqual({ status: payment?.status, amount: payment?.amount, amountRefunded: payment?.amountRefunded }, story.expected, story.name);
  const decisions = await database.sql`
    select decision from webhook_inbox where provider = 'stripe' and event_id = any(${story.late.map((e) => e.eventId)}::text[]) order by id`;
  assert.deepEqual(
    decisions.map((r) => r.decision),
    story.lateDecisions,
    `${story.name}: the late events' decisions`,
  );
  const told = await deliveredFor(story.key);
  assert.ok(applyBySequence(consumer.acceptedFor(story.key)).inOrder, `${story.name}: in order`);
  for (const [i, event] of told.entries()) {
    const before = told[i - 1];
    if (!before) continue;
    assert.ok(before.status !== 'refunded' || event.status === 'refunded', `${story.name}: told refunded → ${event.status}`);
    assert.ok(
      event.amountRefunded >= before.amountRefunded,
      `${story.name}: told the refunded amount went from ${before.amountRefunded} to ${event.amountRefunded}`,
    );
  }
  assert.deepEqual(
    { status: told.at(-1)!.status, amountRefunded: told.at(-1)!.amountRefunded },
    { status: story.expected.status, amountRefunded: story.expected.amountRefunded },
  );
}

describe("a late event after its payment history's payloads are gone", () => {
  test('inboxctl purge between the history and its last events: each payment ends where its whole history leads', async () => {
    const run = stories('purged', Math.floor(Date.now() / 1000) - 60 * DAY);
    for (const story of run) await deliver(story.history);
    const purge = await runInboxctl(['purge', '--older-than', '0s', '--provider', 'stripe', '--force', '--json'], { ...env, DATABASE_URL: database.url });
    assert.equal(purge.code, 0, purge.stderr);
    assert.equal(purge.json()[0].deleted, run.flatMap((s) => s.history).length, 'every payload of the histories archived and deleted');
    for (const story of run) await deliver(story.late);
    for (const story of run) await assertTold(story);
    assert.equal(consumer.unverified, 0);
  });

  test('a retention run that drops the month between the history and its last events: the same', async () => {
    const run = stories('dropped', Math.floor(Date.now() / 1000) - 60 * DAY);
    for (const story of run) await deliver(story.history);
    // The daily run as it will be four months from now: this month is past every window, whole.
    const now = new Date(Date.now() + 120 * DAY * 1000);
    const config = testConfig(env);
    const retention = await applyRetention(
      { db: service.database.db, archive: createArchiveWriter({ clock: () => now }) },
      { providers: config.providers, now, archiveDir },
    );
    const thisMonth = `webhook_inbox_p${new Date().toISOString().slice(0, 7).replace('-', '_')}`;
    assert.ok(
      retention.partitions.dropped.some((p) => p.partition === thisMonth && p.rows > 0),
      `${thisMonth} dropped: ${JSON.stringify(retention.partitions)}`,
    );
    const [left] = await database.sql`select count(*)::int as n from webhook_inbox where event_id like 'evt_dropped_%'`;
    assert.equal(left!.n, 0, "the histories' payloads are gone");
    for (const story of run) await deliver(story.late);
    for (const story of run) await assertTold(story);
    assert.equal(consumer.unverified, 0);
  });
});
