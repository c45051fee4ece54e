import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { useTestDatabase } from '../support/database.ts';
import { paymentsHandlerWithBug } from '../support/handlers.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { runInboxctl } from './run-inboxctl.ts';

const SECRET = 'whsec_dry_run_secret';
const database = useTestDatabase();
let service: TestService;
let env: Record<string, string>;
const t0 = Math.floor(Date.now() / 1000) - 3600;

// The deployed handler fails the evt_bug_* events until the fix is deployed (bugDeployed = false).
let bugDeployed = true;
const paymentsWithBug = paymentsHandlerWithBug('evt_bug_', () => bugDeployed);

/**
 * Each payment's history, sent in this order; the evt_bug_* events fail. One replayed event per
 * payment: a payment's replayed events run one at a time in an order pg-boss does not promise
 * (README, replay --dry-run), and this test compares every event's outcome.
 */
const history = [
  // ch_refund: paid, and its refund failed. The replay moves it paid → refunded.
  { id: 'evt_ok_refund_paid', type: 'charge.succeeded', chargeId: 'ch_refund', created: t0 },
  { id: 'evt_bug_refund', type: 'charge.refunded', chargeId: 'ch_refund', created: t0 + 60, amountRefunded: 2000 },
  // ch_new: its only event failed, so there is no payment yet. The replay creates it, paid.
  { id: 'evt_bug_new', type: 'charge.succeeded', chargeId: 'ch_new', created: t0 },
  // ch_late: the refund arrived first and was applied; the earlier charge.succeeded failed. The
  // replay completes the history and changes nothing: the event is ignored.
  { id: 'evt_ok_late_refund', type: 'charge.refunded', chargeId: 'ch_late', created: t0 + 60, amountRefunded: 2000 },
  { id: 'evt_bug_late_paid', type: 'charge.succeeded', chargeId: 'ch_late', created: t0 },
  // ch_dispute: refunded, then disputed: refunded → disputed is refused, the dispute is ignored.
  // Replayed (status ignored), it is ignored again.
  { id: 'evt_ok_dispute_paid', type: 'charge.succeeded', chargeId: 'ch_dispute', created: t0 },
  { id: 'evt_ok_dispute_refund', type: 'charge.refunded', chargeId: 'ch_dispute', created: t0 + 60, amountRefunded: 2000 },
  { id: 'evt_ok_dispute', type: 'charge.dispute.created', chargeId: 'ch_dispute', created: t0 + 120 },
  // Not a payment event: ignored, and ignored again.
  { id: 'evt_ok_customer', type: 'customer.created', chargeId: 'cus_1', created: t0 },
];

async function inboxStatuses(): Promise<Record<string, string>> {
  const rows = await database.sql`select event_id, status from webhook_inbox order by id`;
  return Object.fromEntries(rows.map((r) => [r.event_id, r.status]));
}

/** Everything of the inbox's a replay could write, read whole. */
async function databaseState() {
  return {
    inbox: await database.sql`select * from webhook_inbox order by id`,
    payments: await database.sql`select * from payments order by id`,
    transitions: await database.sql`select * from payment_transitions order by id`,
    paymentEvents: await database.sql`select * from payment_events order by payment_id, sequence`,
    lanes: await database.sql`select * from delivery_lanes order by destination, payment_id`,
    // The queues processing and delivery use; the cron queues (inbox-sweep, …) come and go on their own.
    jobs: await database.sql`select name, state, count(*)::int as n from pgboss.job where name in ('webhooks', 'webhooks-dead-letter', 'deliveries') group by 1, 2 order by 1, 2`,
  };
}

setup(async () => {
  service = await startTestService({
    database,
    env: { WEBHOOK_SECRET_STRIPE: SECRET, WORKER_MAX_ATTEMPTS: '1' },
    handlers: createHandlerRegistry([paymentsWithBug]),
  });
  // The CLI has a destination: the dry run's payment changes queue delivery jobs in its transaction (rolled back).
  env = {
    DATABASE_URL: database.url,
    WEBHOOK_SECRET_STRIPE: SECRET,
    DESTINATION_URL_ORDERS: 'http://127.0.0.1:9/hooks',
    DESTINATION_SECRET_ORDERS: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
  };
  for (const event of history) {
    const response = await postStripe(service.baseUrl, chargeEvent(event), SECRET);
    assert.equal(response.status, 200);
    // In order: the history above is the order of arrival.
    await waitFor(async () => ['processed', 'ignored', 'failed'].includes((await inboxStatuses())[event.id] ?? ''), {
      message: `${event.id} settled`,
      timeoutMs: 30_000,
    });
  }
});

describe('inboxctl replay --dry-run', () => {
  test('changes nothing, yet predicts exactly what the real replay then does', async () => {
    assert.deepEqual(await inboxStatuses(), {
      evt_ok_refund_paid: 'processed',
      evt_bug_refund: 'failed',
      evt_bug_new: 'failed',
      evt_ok_late_refund: 'processed',
      evt_bug_late_paid: 'failed',
      evt_ok_dispute_paid: 'processed',
      evt_ok_dispute_refund: 'processed',
      evt_ok_dispute: 'ignored',
      evt_ok_customer: 'ignored',
    });
    bugDeployed = false; // the fix is deployed
    // A row settles before pg-boss completes its job: wait for the queues to be still, so the state read is.
    await waitFor(async () => (await database.sql`select 1 from pgboss.job where name like 'webhooks%' and state < 'completed'`).length === 0, {
      message: 'no job queued or running',
    });

    const before = await databaseState();
    const dry = await runInboxctl(['replay', 'stripe', '--status', 'failed,ignored', '--dry-run', '--json'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(await databaseState(), before, 'the dry run wrote nothing and queued nothing');

    const { prediction, matched, replayed } = dry.json();
    assert.equal(matched, 5);
    assert.equal(replayed, 0);
    const predicted = Object.fromEntries(
      prediction.events.map((e: { eventId: string; outcome: string; decision?: { decision: string } }) => [e.eventId, [e.outcome, e.decision?.decision]]),
    );
    assert.deepEqual(predicted, {
      evt_bug_refund: ['processed', 'applied'],
      evt_bug_new: ['processed', 'applied'],
      evt_bug_late_paid: ['ignored', 'stale'],
      evt_ok_dispute: ['ignored', 'rejected_transition'],
      evt_ok_customer: ['ignored', 'not_a_payment_event'],
    });
    const predictedPayments = Object.fromEntries(
      prediction.payments.map((p: { chargeId: string; now: string | null; after: string | null }) => [p.chargeId, [p.now, p.after]]),
    );
    assert.deepEqual(predictedPayments, {
      ch_refund: ['paid', 'refunded'],
      ch_new: [null, 'paid'],
      ch_late: ['refunded', 'refunded'],
      ch_dispute: ['refunded', 'refunded'],
    });

    const text = await runInboxctl(['replay', 'stripe', '--status', 'failed,ignored', '--dry-run'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.out, /^Dry run: nothing changed/m);
    assert.match(text.out, /^evt_bug_refund +charge\.refunded +failed +processed +applied \(paid → refunded\) +stripe:ch_refund$/m);
    assert.match(text.out, /^evt_ok_dispute +charge\.dispute\.created +ignored +ignored +rejected_transition \(refunded → disputed\) +stripe:ch_dispute$/m);
    assert.match(text.out, /^stripe:ch_new +\(none\) +paid$/m);
    assert.deepEqual(await databaseState(), before, 'the text dry run wrote nothing either');

    const replay = await runInboxctl(['replay', 'stripe', '--status', 'failed,ignored', '--json'], env);
    assert.equal(replay.code, 0, replay.stderr);
    assert.equal(replay.json().replayed, 5);
    const replayedIds = Object.keys(predicted);
    await waitFor(() => settled(replayedIds), { message: 'the replayed events settled', timeoutMs: 60_000 });
    const rows = await database.sql`select event_id, status, decision from webhook_inbox where event_id = any(${replayedIds})`;
    const real = Object.fromEntries(rows.map((r) => [r.event_id, [r.status, r.decision ?? undefined]]));
    assert.deepEqual(real, predicted, 'each event ended, and was decided, as the dry run said');
    const payments = await database.sql`select gateway_charge_id, status from payments order by id`;
    const after = Object.fromEntries(payments.map((p) => [p.gateway_charge_id, p.status]));
    assert.deepEqual(
      after,
      Object.fromEntries(Object.entries(predictedPayments).map(([chargeId, [, status]]) => [chargeId, status])),
      'each payment ended as the dry run said',
    );
  });
});

async function settled(eventIds: string[]): Promise<boolean> {
  const statuses = await inboxStatuses();
  return eventIds.every((id) => statuses[id] === 'processed' || statuses[id] === 'ignored' || statuses[id] === 'failed');
}
