import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type Stripe from 'stripe';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { postStripe } from '../support/stripe.ts';
import { fixtureCharge, fixtureDispute, fixtureEventBody } from '../support/stripe-objects.ts';
import { SECRET, paymentOf, waitUntilSettled } from './harness.ts';

// Histories built on Stripe's published example objects (test/support/stripe-objects.ts), signed by
// the official SDK and posted to the real service one at a time, each processed before the next
// arrives: the decision an event gets is about what was known when it was processed.
const database = useTestDatabase();
const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ADMIN_TOKEN: 'event-decisions-admin-token-0123' } });

const BASE = Math.floor(Date.now() / 1000) - 30 * 86_400;
const DAY = 86_400;
const AMOUNT = 4990;

interface Decided {
  eventId: string;
  status: string;
  decision: string | null;
  detail: Record<string, unknown> | null;
}

/** A counter's value as GET /metrics prints it (undefined: no such series). */
async function metricValue(name: string, labels: string): Promise<number | undefined> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

async function decisionsOf(eventIds: readonly string[]): Promise<Decided[]> {
  const rows = await database.sql`
    select event_id, status, decision, decision_detail from webhook_inbox
    where provider = 'stripe' and event_id = any(${[...eventIds]}::text[]) order by id`;
  return rows.map((r) => ({ eventId: r.event_id, status: r.status, decision: r.decision, detail: r.decision_detail }));
}

/** Posts the event and waits until it is processed: the next one arrives after it. */
async function deliver(id: string, type: Stripe.Event.Type, atSecond: number, object: Stripe.Charge | Stripe.Dispute): Promise<void> {
  const response = await postStripe(service.baseUrl, fixtureEventBody(id, type, BASE + atSecond, object), SECRET);
  assert.equal(response.status, 200, await response.text());
  await waitUntilSettled(database.sql, [id]);
}

function charge(pi: string, fields: Partial<Stripe.Charge>): Stripe.Charge {
  return fixtureCharge({
    id: `ch_${pi.slice(3)}`,
    payment_intent: pi,
    amount: AMOUNT,
    amount_captured: AMOUNT,
    captured: true,
    amount_refunded: 0,
    currency: 'brl',
    ...fields,
  });
}

function dispute(pi: string, status: Stripe.Dispute.Status): Stripe.Dispute {
  return fixtureDispute({ id: `dp_${pi.slice(3)}`, charge: `ch_${pi.slice(3)}`, payment_intent: pi, amount: AMOUNT, currency: 'brl', status });
}

describe('every processed event says why it ended as it did', () => {
  test('a dispute of a refunded charge: both dispute events are ignored as rejected transitions from refunded, and /metrics counts them', async () => {
    const pi = 'pi_refunded_then_disputed';
    const refusedDisputes = () => metricValue('inbox_rejected_money_events_total', 'provider="stripe",kind="payment.disputed"');
    const refusedChargebacks = () => metricValue('inbox_rejected_money_events_total', 'provider="stripe",kind="payment.charged_back"');
    assert.deepEqual([await refusedDisputes(), await refusedChargebacks()], [0, 0], 'the series exist from the start, at 0');
    // The fixture's charge is an uncaptured authorization: captured an hour later, refunded the next day.
    await deliver('evt_rd_1', 'charge.succeeded', 0, charge(pi, { captured: false, amount_captured: 0 }));
    await deliver('evt_rd_2', 'charge.captured', 3600, charge(pi, {}));
    await deliver('evt_rd_3', 'charge.refunded', DAY, charge(pi, { refunded: true, amount_refunded: AMOUNT }));
    await deliver('evt_rd_4', 'charge.dispute.created', 3 * DAY, dispute(pi, 'needs_response'));
    await deliver('evt_rd_5', 'charge.dispute.closed', 40 * DAY, dispute(pi, 'lost'));

    assert.equal((await paymentOf(database.sql, pi))?.status, 'refunded');
    const at = (seconds: number) => new Date((BASE + seconds) * 1000).toISOString();
    assert.deepEqual(await decisionsOf(['evt_rd_1', 'evt_rd_2', 'evt_rd_3', 'evt_rd_4', 'evt_rd_5']), [
      { eventId: 'evt_rd_1', status: 'processed', decision: 'applied', detail: { from: null, to: 'authorized' } },
      { eventId: 'evt_rd_2', status: 'processed', decision: 'applied', detail: { from: 'authorized', to: 'paid' } },
      { eventId: 'evt_rd_3', status: 'processed', decision: 'applied', detail: { from: 'paid', to: 'refunded' } },
      { eventId: 'evt_rd_4', status: 'ignored', decision: 'rejected_transition', detail: { from: 'refunded', to: 'disputed', occurredAt: at(3 * DAY) } },
      { eventId: 'evt_rd_5', status: 'ignored', decision: 'rejected_transition', detail: { from: 'refunded', to: 'charged_back', occurredAt: at(40 * DAY) } },
    ]);
    assert.deepEqual([await refusedDisputes(), await refusedChargebacks()], [1, 1]);
    assert.equal(await metricValue('inbox_rejected_money_events_total', 'provider="stripe",kind="payment.refunded"'), 0, 'the refund applied: nothing refused');
  });

  test('an event older than what is known is stale, and names the newer occurred_at', async () => {
    const pi = 'pi_stale';
    await deliver('evt_st_2', 'charge.refunded', DAY, charge(pi, { refunded: true, amount_refunded: AMOUNT }));
    await deliver('evt_st_1', 'charge.succeeded', 0, charge(pi, {}));
    assert.equal((await paymentOf(database.sql, pi))?.status, 'refunded');
    assert.deepEqual(await decisionsOf(['evt_st_1']), [
      {
        eventId: 'evt_st_1',
        status: 'ignored',
        decision: 'stale',
        detail: { status: 'paid', occurredAt: new Date(BASE * 1000).toISOString(), knownOccurredAt: new Date((BASE + DAY) * 1000).toISOString() },
      },
    ]);
  });

  test('the same status told twice is stale, not a rejected transition (no alarm for a refund Stripe reports twice)', async () => {
    const pi = 'pi_refund_twice';
    const refunded = charge(pi, { refunded: true, amount_refunded: AMOUNT });
    await deliver('evt_rt_1', 'charge.succeeded', 0, charge(pi, {}));
    await deliver('evt_rt_2', 'charge.refunded', DAY, refunded);
    await deliver('evt_rt_3', 'charge.refunded', DAY + 5, refunded);
    assert.deepEqual(
      (await decisionsOf(['evt_rt_3'])).map((r) => [r.status, r.decision, r.detail?.status]),
      [['ignored', 'stale', 'refunded']],
    );
    assert.equal(await metricValue('inbox_rejected_money_events_total', 'provider="stripe",kind="payment.refunded"'), 0);
  });

  test('a type no driver maps is not a payment event', async () => {
    await deliver('evt_unmapped', 'charge.updated', 0, charge('pi_unmapped', {}));
    assert.deepEqual(await decisionsOf(['evt_unmapped']), [
      { eventId: 'evt_unmapped', status: 'ignored', decision: 'not_a_payment_event', detail: { kind: 'stripe:charge.updated' } },
    ]);
  });

  test('inboxctl show, inboxctl stats (text and --json) and the dashboard event page say it (the tests above ran first)', async () => {
    const env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
    const show = await runInboxctl(['show', 'stripe', 'evt_rd_4'], env);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.out, /^ {2}decision {5}rejected_transition: refunded → disputed is not allowed \(event of \d{4}-\d\d-\d\dT[\d:.]+Z\)$/m);
    assert.equal((await runInboxctl(['show', 'stripe', 'evt_rd_4', '--json'], env)).json().decisionDetail.from, 'refunded');

    const stats = await runInboxctl(['stats', '--json'], env);
    assert.equal(stats.code, 0, stats.stderr);
    assert.deepEqual(stats.json().decisions, [
      { provider: 'stripe', decision: 'applied', count: 6, latestEventId: 'evt_rt_2' },
      { provider: 'stripe', decision: 'rejected_transition', count: 2, latestEventId: 'evt_rd_5' },
      { provider: 'stripe', decision: 'stale', count: 2, latestEventId: 'evt_rt_3' },
      { provider: 'stripe', decision: 'not_a_payment_event', count: 1, latestEventId: 'evt_unmapped' },
    ]);
    const text = await runInboxctl(['stats', '--provider', 'stripe'], env);
    assert.match(text.out, /^stripe +rejected_transition +2 +inboxctl show stripe evt_rd_5$/m);

    const [row] = await database.sql`select id from webhook_inbox where event_id = 'evt_rd_5'`;
    const page = await (await fetch(`${service.baseUrl}/dashboard/events/${row!.id}`)).text();
    assert.match(page, /<dd id="decision" data-decision="rejected_transition">rejected_transition: refunded → charged_back is not allowed/);
  });
});
