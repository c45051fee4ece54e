import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { setup } from '../support/setup.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { fixtureCharge, fixtureEventBody } from '../support/stripe-objects.ts';
import { postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

// Stripe's defaults: refunds and disputes re-read from the API (here a fake one on 127.0.0.1),
// payments and captures ordered by occurred_at. Events are Stripe's published fixtures, signed
// by the official SDK.
const SECRET = 'whsec_refetch_decisions_secret';
const AMOUNT = 2500;

const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;

setup(async () => {
  gateway = await startFakeGateway();
  const file = JSON.stringify({ providers: { stripe: { driver: 'stripe', api: { baseUrl: gateway.baseUrl } } } });
  service = await startTestService({
    database,
    env: {
      INBOX_CONFIG: '/inbox.json',
      WEBHOOK_SECRET_STRIPE: SECRET,
      GATEWAY_API_KEY_STRIPE: 'sk_test_refetch_decisions',
      INBOX_ADMIN_TOKEN: 'refetch-decisions-admin-token-01',
    },
    files: { '/inbox.json': file },
  });
});

after(async () => {
  await gateway?.close();
});

const charge = (id: string, fields: Record<string, unknown> = {}) =>
  fixtureCharge({
    id,
    payment_intent: null,
    amount: AMOUNT,
    amount_captured: AMOUNT,
    amount_refunded: 0,
    captured: true,
    refunded: false,
    status: 'succeeded',
    currency: 'brl',
    ...fields,
  });

async function deliver(id: string, type: 'charge.succeeded' | 'charge.refunded', created: number, object: ReturnType<typeof charge>) {
  const response = await postStripe(service.baseUrl, fixtureEventBody(id, type, created, object), SECRET);
  assert.equal(response.status, 200, await response.text());
  return waitFor(
    async () => {
      const [row] = await database.sql`select id, status, decision, decision_detail from webhook_inbox where provider = 'stripe' and event_id = ${id}`;
      return row && row.status !== 'pending' ? { id: Number(row.id), status: row.status, decision: row.decision, detail: row.decision_detail } : undefined;
    },
    { message: `${id} to be processed` },
  );
}

/** inbox_events_settled_total for stripe as GET /metrics prints it. */
async function settledCount(status: 'processed' | 'ignored'): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`inbox_events_settled_total{provider="stripe",status="${status}"} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('decisions of refetched events', () => {
  test('a re-read event is `refetched` with the read time; an older webhook the read already covers is `superseded` by it', async () => {
    const now = Math.floor(Date.now() / 1000);
    gateway.resources.set('/v1/charges/ch_refetch_decided', charge('ch_refetch_decided', { refunded: true, amount_refunded: AMOUNT }));
    const sentAfter = Date.now();
    const refund = await deliver('evt_rfd_refund', 'charge.refunded', now - 10, charge('ch_refetch_decided', { refunded: true, amount_refunded: AMOUNT }));
    assert.equal(refund.status, 'processed');
    assert.equal(refund.decision, 'refetched');
    const { observedAt, ...rest } = refund.detail;
    assert.deepEqual(rest, { status: 'refunded', from: null, to: 'refunded', changed: true });
    assert.ok(Date.parse(observedAt) >= sentAfter - 1000 && Date.parse(observedAt) <= Date.now(), `observedAt ${observedAt} is when the API was read`);

    // The payment, ordered by occurred_at: an hour before the read, already in what the read said.
    const paid = await deliver('evt_rfd_paid', 'charge.succeeded', now - 3600, charge('ch_refetch_decided'));
    assert.deepEqual(paid, {
      id: paid.id,
      status: 'ignored',
      decision: 'superseded',
      detail: { status: 'paid', occurredAt: new Date((now - 3600) * 1000).toISOString(), snapshotInboxId: refund.id, observedAt },
    });
  });

  test('a re-read that finds the payment already as the gateway says changes nothing: `ignored`, and its decision says so', async () => {
    const now = Math.floor(Date.now() / 1000);
    const refunded = charge('ch_refetch_unchanged', { refunded: true, amount_refunded: AMOUNT });
    gateway.resources.set('/v1/charges/ch_refetch_unchanged', refunded);
    const first = await deliver('evt_rfu_refund', 'charge.refunded', now - 20, refunded);
    assert.deepEqual([first.status, first.decision], ['processed', 'refetched']);
    const [paymentBefore] =
      await database.sql`select id, status, amount::int, amount_refunded::int, event_sequence from payments where gateway_charge_id = 'ch_refetch_unchanged'`;
    const ignoredBefore = await settledCount('ignored');

    // Stripe tells the refund again (a second notice of it); the gateway still says refunded.
    const again = await deliver('evt_rfu_again', 'charge.refunded', now - 5, refunded);
    assert.equal(again.status, 'ignored', 'nothing to change is not an effect');
    assert.equal(again.decision, 'refetched');
    const { observedAt, ...rest } = again.detail;
    assert.deepEqual(rest, { status: 'refunded', from: 'refunded', to: 'refunded', changed: false });
    const [paymentAfter] =
      await database.sql`select id, status, amount::int, amount_refunded::int, event_sequence from payments where gateway_charge_id = 'ch_refetch_unchanged'`;
    assert.deepEqual({ ...paymentAfter }, { ...paymentBefore }, 'the payment is as it was, and no outbound event was written');
    assert.equal(await settledCount('ignored'), ignoredBefore + 1, '/metrics counts it as ignored');

    const page = await (await fetch(`${service.baseUrl}/dashboard/events/${again.id}`)).text();
    // The dashboard writes times to the second, in UTC (src/dashboard/views/format.ts).
    const readAt = `${String(observedAt).slice(0, 19).replace('T', ' ')} UTC`;
    assert.match(
      page,
      new RegExp(`data-decision="refetched">refetched: the gateway said refunded when read at ${readAt}; the payment already was refunded, nothing to change<`),
    );
  });

  test('a re-read that finds more refunded, the status still partially_refunded: `processed`, and the application is told (a second payment.partially_refunded)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const refundedSoFar = (amount: number) => charge('ch_refetch_more_refunded', { amount_refunded: amount });
    gateway.resources.set('/v1/charges/ch_refetch_more_refunded', refundedSoFar(500));
    const first = await deliver('evt_rfm_refund_1', 'charge.refunded', now - 20, refundedSoFar(500));
    assert.deepEqual([first.status, first.decision, first.detail.to], ['processed', 'refetched', 'partially_refunded']);

    gateway.resources.set('/v1/charges/ch_refetch_more_refunded', refundedSoFar(1200));
    const second = await deliver('evt_rfm_refund_2', 'charge.refunded', now - 5, refundedSoFar(1200));
    const { observedAt: _, ...rest } = second.detail;
    assert.equal(second.status, 'processed');
    assert.deepEqual(rest, { status: 'partially_refunded', from: 'partially_refunded', to: 'partially_refunded', changed: true });
    const events = await database.sql`
      select e.sequence, e.status, e.previous_status, e.amount_refunded::int, e.cause_event_id from payment_events e
      join payments p on p.id = e.payment_id where p.gateway_charge_id = 'ch_refetch_more_refunded' order by e.sequence`;
    assert.deepEqual(
      events.map((e) => [e.sequence, e.previous_status, e.status, e.amount_refunded, e.cause_event_id]),
      [
        [1, null, 'partially_refunded', 500, 'evt_rfm_refund_1'],
        [2, 'partially_refunded', 'partially_refunded', 1200, 'evt_rfm_refund_2'],
      ],
    );
  });
});
