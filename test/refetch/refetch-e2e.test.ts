import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { chargeEvent, postStripe, stripeCharge } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

// The real service (receiver + workers) on a real database, its gateway API a real HTTP server on
// 127.0.0.1 (one per file, a path prefix per provider). Every webhook is signed by the official
// Stripe SDK or, for Mercado Pago, with node:crypto here.
const SECRET = 'whsec_refetch_e2e_secret';
const MP_SECRET = 'mp-refetch-e2e-secret';
const API_KEY = 'sk_test_refetch_e2e';
const HALF_OPEN_AFTER_MS = 5000;
const RETRY_AFTER_SECONDS = 4;

const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;

setup(async () => {
  gateway = await startFakeGateway();
  const file = JSON.stringify({
    providers: {
      // Everything re-read except refunds, so a later webhook can be seen applying after a snapshot.
      stripe: {
        driver: 'stripe',
        api: { baseUrl: `${gateway.baseUrl}/main` },
        ordering: { default: 'refetch', 'payment.refunded': 'occurred_at', 'payment.partially_refunded': 'occurred_at' },
      },
      'stripe-breaker': {
        driver: 'stripe',
        api: { baseUrl: `${gateway.baseUrl}/breaker`, breaker: { consecutiveFailures: 2, halfOpenAfterMs: HALF_OPEN_AFTER_MS } },
        ordering: { default: 'refetch' },
      },
      'stripe-slow': { driver: 'stripe', api: { baseUrl: `${gateway.baseUrl}/slow`, timeoutMs: 30_000 }, ordering: { default: 'refetch' } },
      // A breaker that never opens: what holds its calls back must be the Retry-After alone.
      'stripe-busy': {
        driver: 'stripe',
        api: { baseUrl: `${gateway.baseUrl}/busy`, breaker: { consecutiveFailures: 100, halfOpenAfterMs: 1000 } },
        ordering: { default: 'refetch' },
      },
      mercadopago: { driver: 'mercadopago', api: { baseUrl: `${gateway.baseUrl}/mp` } },
    },
  });
  const env = {
    INBOX_ROLE: 'all',
    INBOX_CONFIG: '/inbox.json',
    WEBHOOK_SECRET_STRIPE: SECRET,
    WEBHOOK_SECRET_STRIPE_BREAKER: SECRET,
    WEBHOOK_SECRET_STRIPE_SLOW: SECRET,
    WEBHOOK_SECRET_STRIPE_BUSY: SECRET,
    WEBHOOK_SECRET_MERCADOPAGO: MP_SECRET,
    GATEWAY_API_KEY_STRIPE: API_KEY,
    GATEWAY_API_KEY_STRIPE_BREAKER: API_KEY,
    GATEWAY_API_KEY_STRIPE_SLOW: API_KEY,
    GATEWAY_API_KEY_STRIPE_BUSY: API_KEY,
    GATEWAY_API_KEY_MERCADOPAGO: 'APP_USR-refetch-e2e',
  };
  service = await startTestService({ database, env, files: { '/inbox.json': file } });
});

after(async () => {
  await gateway?.close();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function send(provider: string, body: string) {
  const response = await postStripe(service.baseUrl, body, SECRET, { provider });
  assert.equal(response.status, 200, await response.clone().text());
}

interface InboxRow {
  id: number;
  status: string;
  attempts: number;
  last_error: string | null;
  fact: Record<string, unknown> | null;
  processed_at: Date | null;
}

async function inboxRow(provider: string, eventId: string): Promise<InboxRow | undefined> {
  const [row] = await database.sql<InboxRow[]>`
    select id, status, attempts, last_error, fact, processed_at from webhook_inbox where provider = ${provider} and event_id = ${eventId}`;
  return row;
}

function settled(provider: string, eventId: string, timeoutMs = 20_000) {
  return waitFor(
    async () => {
      const row = await inboxRow(provider, eventId);
      return row && row.status !== 'pending' ? row : undefined;
    },
    { message: `${provider} ${eventId} to be processed`, timeoutMs: timeoutMs },
  );
}

async function payment(provider: string, chargeId: string) {
  const [row] = await database.sql`
    select status, amount::int, amount_refunded::int, currency from payments where provider = ${provider} and gateway_charge_id = ${chargeId}`;
  return row;
}

function requestsUnder(prefix: string) {
  return gateway.requests.filter((r) => r.pathname.startsWith(prefix));
}

async function metricValue(name: string, labels: string): Promise<number | undefined> {
  const text = await service.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** A signed Mercado Pago notice (x-signature made here with node:crypto) about one payment, processed. */
async function mercadoPagoNotice(paymentId: string, notificationId: number): Promise<void> {
  const body = JSON.stringify({
    action: 'payment.updated',
    api_version: 'v1',
    data: { id: paymentId },
    date_created: new Date().toISOString(),
    id: notificationId,
    live_mode: false,
    type: 'payment',
    user_id: 724484980,
  });
  const ts = String(Date.now());
  const requestId = `req-${notificationId}`;
  const v1 = createHmac('sha256', MP_SECRET).update(`id:${paymentId};request-id:${requestId};ts:${ts};`).digest('hex');
  const response = await fetch(`${service.baseUrl}/webhooks/mercadopago?data.id=${paymentId}&type=payment`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', 'x-signature': `ts=${ts},v1=${v1}`, 'x-request-id': requestId },
  });
  assert.equal(response.status, 200);
  assert.equal((await settled('mercadopago', String(notificationId))).status, 'processed');
}

describe('refetch: the webhook is a notice, the gateway API is the truth', () => {
  test('a stale webhook whose payload says pending ends paid when the gateway says paid', async () => {
    gateway.resources.set('/main/v1/charges/ch_stale', stripeCharge('ch_stale'));
    await send('stripe', chargeEvent({ id: 'evt_stale_pending', type: 'charge.pending', chargeId: 'ch_stale', created: nowSeconds() - 60 }));
    const row = await settled('stripe', 'evt_stale_pending');
    assert.equal(row.status, 'processed');
    assert.deepEqual({ ...(await payment('stripe', 'ch_stale')) }, { status: 'paid', amount: 2000, amount_refunded: 0, currency: 'BRL' });
    assert.equal(row.fact?.snapshot, true, 'the inbox row keeps what the event meant: the snapshot');
    assert.equal(row.fact?.status, 'paid');
    const [request] = requestsUnder('/main/v1/charges/ch_stale');
    assert.equal(request?.headers.authorization, `Bearer ${API_KEY}`);
  });

  test('a webhook after the snapshot applies through the state machine; the snapshot still counts in later folds', async () => {
    const before = requestsUnder('/main').length;
    await send(
      'stripe',
      chargeEvent({ id: 'evt_stale_refund', type: 'charge.refunded', chargeId: 'ch_stale', created: nowSeconds() + 1, amountRefunded: 500 }),
    );
    assert.equal((await settled('stripe', 'evt_stale_refund')).status, 'processed');
    assert.deepEqual({ ...(await payment('stripe', 'ch_stale')) }, { status: 'partially_refunded', amount: 2000, amount_refunded: 500, currency: 'BRL' });
    assert.equal(requestsUnder('/main').length, before, 'refunds are ordered by occurred_at here: no API call');
  });

  test('a Mercado Pago notice (no state at all) becomes the payment the API describes', async () => {
    gateway.resources.set('/mp/v1/payments/987654321', {
      id: 987654321,
      status: 'approved',
      status_detail: 'accredited',
      currency_id: 'BRL',
      transaction_amount: 150.5,
      transaction_amount_refunded: 0,
      date_last_updated: '2026-06-27T10:04:59.000-03:00',
    });
    await mercadoPagoNotice('987654321', 115029480001);
    assert.deepEqual({ ...(await payment('mercadopago', '987654321')) }, { status: 'paid', amount: 15050, amount_refunded: 0, currency: 'BRL' });
    assert.equal(requestsUnder('/mp/v1/payments/987654321')[0]?.headers.authorization, 'Bearer APP_USR-refetch-e2e');
  });
});

describe('refetch of authorizations and PaymentIntents', () => {
  test('a Stripe charge of a PaymentIntent is keyed by the intent, and the refetch reads the intent with its latest charge', async () => {
    const uncaptured = stripeCharge('ch_refetch_held', { captured: false, amount_captured: 0, payment_intent: 'pi_refetch_held' });
    gateway.resources.set('/main/v1/payment_intents/pi_refetch_held', {
      id: 'pi_refetch_held',
      object: 'payment_intent',
      amount: 2000,
      currency: 'brl',
      status: 'requires_capture',
      capture_method: 'manual',
      latest_charge: uncaptured,
    });
    await send(
      'stripe',
      chargeEvent({
        id: 'evt_refetch_held',
        type: 'charge.succeeded',
        chargeId: 'ch_refetch_held',
        paymentIntent: 'pi_refetch_held',
        captured: false,
        created: nowSeconds() - 60,
      }),
    );
    assert.equal((await settled('stripe', 'evt_refetch_held')).status, 'processed');
    assert.deepEqual({ ...(await payment('stripe', 'pi_refetch_held')) }, { status: 'authorized', amount: 2000, amount_refunded: 0, currency: 'BRL' });
    assert.deepEqual(
      requestsUnder('/main/v1/payment_intents/pi_refetch_held').map((r) => r.path),
      ['/main/v1/payment_intents/pi_refetch_held?expand[]=latest_charge'],
    );
    assert.equal(requestsUnder('/main/v1/charges/ch_refetch_held').length, 0);
  });

  test('Mercado Pago: authorized (capture=false) is held funds; cancelled afterwards is canceled, never paid', async () => {
    const held = {
      id: 987650001,
      status: 'authorized',
      status_detail: 'pending_capture',
      captured: false,
      currency_id: 'BRL',
      transaction_amount: 80,
      transaction_amount_refunded: 0,
    };
    gateway.resources.set('/mp/v1/payments/987650001', held);
    await mercadoPagoNotice('987650001', 115029480101);
    assert.deepEqual({ ...(await payment('mercadopago', '987650001')) }, { status: 'authorized', amount: 8000, amount_refunded: 0, currency: 'BRL' });
    gateway.resources.set('/mp/v1/payments/987650001', { ...held, status: 'cancelled', status_detail: 'expired' });
    await mercadoPagoNotice('987650001', 115029480102);
    assert.deepEqual({ ...(await payment('mercadopago', '987650001')) }, { status: 'canceled', amount: 8000, amount_refunded: 0, currency: 'BRL' });
  });
});

describe('circuit breaker', () => {
  test('opens after repeated failures: events wait without spending attempts or failing, then it closes and they apply', async () => {
    gateway.rules.push((request) => (request.pathname.startsWith('/breaker/') ? { status: 503, json: { error: { message: 'maintenance' } } } : undefined));
    await send('stripe-breaker', chargeEvent({ id: 'evt_brk_1', type: 'charge.refunded', chargeId: 'ch_brk_1', created: nowSeconds(), amountRefunded: 2000 }));
    // Two 503s open the breaker; the third attempt (the test's last: WORKER max 3) finds it open.
    const deferred = await waitFor(
      async () => {
        const row = await inboxRow('stripe-breaker', 'evt_brk_1');
        return row?.last_error?.includes('BreakerOpenError') ? row : undefined;
      },
      { message: 'the event to be deferred' },
    );
    assert.equal(deferred.status, 'pending', 'not failed early');
    assert.equal(deferred.attempts, 2, 'the deferral is no attempt');
    assert.equal(requestsUnder('/breaker/').length, 2, 'nothing sent while open');
    assert.equal(await metricValue('inbox_refetch_breaker_state', 'provider="stripe-breaker"'), 2);
    assert.equal(await payment('stripe-breaker', 'ch_brk_1'), undefined, 'not applied from the payload either');

    // Another charge's event while it is open waits too, without a request.
    await send('stripe-breaker', chargeEvent({ id: 'evt_brk_2', type: 'charge.succeeded', chargeId: 'ch_brk_2', created: nowSeconds() }));
    await waitFor(async () => (await inboxRow('stripe-breaker', 'evt_brk_2'))?.last_error?.includes('BreakerOpenError'), {
      message: 'the second event to be deferred',
    });
    assert.equal(requestsUnder('/breaker/').length, 2);

    // The gateway recovers; at half-open time one trial call closes the breaker.
    gateway.rules.length = 0;
    gateway.resources.set('/breaker/v1/charges/ch_brk_1', stripeCharge('ch_brk_1', { amount_refunded: 2000, refunded: true }));
    gateway.resources.set('/breaker/v1/charges/ch_brk_2', stripeCharge('ch_brk_2'));
    const first = await settled('stripe-breaker', 'evt_brk_1', HALF_OPEN_AFTER_MS + 15_000);
    const second = await settled('stripe-breaker', 'evt_brk_2', 15_000);
    assert.deepEqual([first.status, first.attempts, first.last_error], ['processed', 3, null]);
    assert.deepEqual([second.status, second.attempts], ['processed', 1]);
    assert.equal((await payment('stripe-breaker', 'ch_brk_1'))?.status, 'refunded');
    assert.equal((await payment('stripe-breaker', 'ch_brk_2'))?.status, 'paid');
    assert.equal(requestsUnder('/breaker/').length, 4);
    assert.equal(await metricValue('inbox_refetch_breaker_state', 'provider="stripe-breaker"'), 0);
    assert.ok((await metricValue('inbox_refetch_calls_total', 'provider="stripe-breaker",outcome="breaker_open"'))! >= 2);
  });
});

describe('a gateway that answers with Retry-After', () => {
  // Workers retry failed attempts 1 s apart (test/support/config.ts): a wait of 4 s can only come
  // from the Retry-After. Retry-After is wall-clock time, so arrivals are too.
  const arrivals = (chargeId: string) => requestsUnder(`/busy/v1/charges/${chargeId}`).map((r) => Date.now() - (performance.now() - r.arrivedAtMs));
  const refund = (eventId: string, chargeId: string) =>
    send('stripe-busy', chargeEvent({ id: eventId, type: 'charge.refunded', chargeId, created: nowSeconds(), amountRefunded: 2000 }));
  const recorded = (eventId: string) =>
    waitFor(
      async () => {
        const row = await inboxRow('stripe-busy', eventId);
        return row?.last_error ? row : undefined;
      },
      { message: `${eventId}'s first answer to be recorded` },
    );

  /** The first request for the charge gets `answer`, the later ones its state. */
  function answerFirstWith(chargeId: string, answer: () => Record<string, string>, status: number) {
    let answered = false;
    gateway.resources.set(`/busy/v1/charges/${chargeId}`, stripeCharge(chargeId, { amount_refunded: 2000, refunded: true }));
    gateway.rules.push((request) => {
      if (answered || request.pathname !== `/busy/v1/charges/${chargeId}`) return undefined;
      answered = true;
      return { status, headers: answer(), json: { error: { type: 'rate_limit_error', message: 'Too many requests' } } };
    });
  }

  test('429 with Retry-After in seconds: the event waits that long without spending an attempt, and no other call is sent meanwhile', async () => {
    answerFirstWith('ch_ra_429', () => ({ 'retry-after': String(RETRY_AFTER_SECONDS) }), 429);
    await refund('evt_ra_429', 'ch_ra_429');
    const waiting = await recorded('evt_ra_429');
    const limitedAt = arrivals('ch_ra_429')[0]!;
    assert.equal(waiting.status, 'pending', 'deferred, not failed');
    assert.equal(waiting.attempts, 0, 'waiting out Retry-After spends no attempt');
    assert.match(waiting.last_error!, /Retry-After/);

    // Another charge of the same account meanwhile: the gateway asked for quiet, so it waits too.
    gateway.resources.set('/busy/v1/charges/ch_ra_other', stripeCharge('ch_ra_other', { amount_refunded: 2000, refunded: true }));
    await refund('evt_ra_other', 'ch_ra_other');

    const done = await settled('stripe-busy', 'evt_ra_429');
    assert.deepEqual([done.status, done.attempts, done.last_error], ['processed', 1, null]);
    assert.equal((await settled('stripe-busy', 'evt_ra_other')).status, 'processed');
    const [, retried] = arrivals('ch_ra_429');
    assert.equal(arrivals('ch_ra_429').length, 2, 'one call, then one after the wait');
    assert.ok(retried! - limitedAt >= RETRY_AFTER_SECONDS * 1000 - 50, `asked again ${retried! - limitedAt} ms after the 429, not before Retry-After`);
    assert.ok(arrivals('ch_ra_other')[0]! - limitedAt >= RETRY_AFTER_SECONDS * 1000 - 50, 'the other charge was not read before Retry-After either');
  });

  test('503 with Retry-After as an HTTP-date: the same wait, until that time', async () => {
    // Whole seconds, as an HTTP-date has: at least RETRY_AFTER_SECONDS from now.
    const until = new Date(Math.ceil(Date.now() / 1000) * 1000 + RETRY_AFTER_SECONDS * 1000);
    answerFirstWith('ch_ra_503', () => ({ 'retry-after': until.toUTCString() }), 503);
    await refund('evt_ra_503', 'ch_ra_503');
    const waiting = await recorded('evt_ra_503');
    assert.deepEqual([waiting.status, waiting.attempts], ['pending', 0]);

    const done = await settled('stripe-busy', 'evt_ra_503');
    assert.deepEqual([done.status, done.attempts], ['processed', 1]);
    const [, retried] = arrivals('ch_ra_503');
    assert.ok(retried! >= until.getTime() - 50, `asked again at ${new Date(retried!).toISOString()}, not before ${until.toISOString()}`);
  });
});

describe('no database lock is held while a fetch is in flight', () => {
  test("with the gateway stalled on charge A, charge B is processed meanwhile and A's row is not locked", async () => {
    gateway.resources.set('/slow/v1/charges/ch_A', stripeCharge('ch_A'));
    gateway.resources.set('/slow/v1/charges/ch_B', stripeCharge('ch_B'));
    gateway.rules.push((request) => (request.pathname === '/slow/v1/charges/ch_A' ? { hold: true } : undefined));
    await send('stripe-slow', chargeEvent({ id: 'evt_A', type: 'charge.pending', chargeId: 'ch_A', created: nowSeconds() }));
    await waitFor(() => gateway.heldCount() === 1, { message: "A's fetch to be in flight" });

    // A's job is inside prepare: if it held a transaction, its inbox row would be locked.
    const a = (await inboxRow('stripe-slow', 'evt_A'))!;
    await database.sql.begin(async (tx) => {
      const locked = await tx`select id from webhook_inbox where id = ${a.id} for update nowait`;
      assert.equal(locked.length, 1, "A's inbox row can be locked by someone else: the job holds no lock on it");
    });

    await send('stripe-slow', chargeEvent({ id: 'evt_B', type: 'charge.pending', chargeId: 'ch_B', created: nowSeconds() }));
    const b = await settled('stripe-slow', 'evt_B');
    assert.equal(b.status, 'processed');
    assert.equal((await inboxRow('stripe-slow', 'evt_A'))?.status, 'pending', 'A still waits for the gateway');
    assert.equal(gateway.heldCount(), 1);

    gateway.releaseHeld();
    const aDone = await settled('stripe-slow', 'evt_A');
    assert.equal(aDone.status, 'processed');
    assert.ok(b.processed_at! < aDone.processed_at!, 'B completed before A');
    assert.equal((await payment('stripe-slow', 'ch_A'))?.status, 'paid');
    assert.equal((await payment('stripe-slow', 'ch_B'))?.status, 'paid');
  });
});

describe('upgrade: a payment stored under its charge id before PaymentIntents were the key', () => {
  test('a refetched event of that charge (keyed by its PaymentIntent) updates the same row, not a second payment', async () => {
    // What the previous version left: the payment and its event under the charge id.
    const occurred = new Date((nowSeconds() - 86_400) * 1000);
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, status, processed_at, attempts, fact)
      values ('stripe', 'evt_legacy_paid', 'charge.succeeded', 'ch_legacy_refetch', ${database.sql.json({ id: 'evt_legacy_paid' })}, ${Buffer.from('{"id":"evt_legacy_paid"}')},
              ${occurred}, 'processed', now(), 1,
              ${database.sql.json({ chargeId: 'ch_legacy_refetch', status: 'paid', occurredAt: occurred.toISOString(), amount: 2000, amountRefunded: 0, currency: 'BRL' })})`;
    const [legacy] = await database.sql`
      insert into payments (provider, gateway_charge_id, status, amount, amount_refunded, currency, last_gateway_event_at, event_sequence)
      values ('stripe', 'ch_legacy_refetch', 'paid', 2000, 0, 'BRL', ${occurred}, 1) returning id`;

    // A dispute now, read from the gateway (disputes are ordered by refetch): the intent and its charge.
    const charge = stripeCharge('ch_legacy_refetch', { payment_intent: 'pi_legacy_refetch', disputed: true });
    gateway.resources.set('/main/v1/payment_intents/pi_legacy_refetch', {
      id: 'pi_legacy_refetch',
      object: 'payment_intent',
      amount: 2000,
      currency: 'brl',
      status: 'succeeded',
      latest_charge: charge,
    });
    gateway.resources.set('/main/v1/disputes', {
      object: 'list',
      data: [{ id: 'dp_legacy_refetch', object: 'dispute', charge: 'ch_legacy_refetch', status: 'needs_response' }],
    });
    await send(
      'stripe',
      chargeEvent({
        id: 'evt_legacy_dispute',
        type: 'charge.dispute.created',
        chargeId: 'ch_legacy_refetch',
        paymentIntent: 'pi_legacy_refetch',
        created: nowSeconds(),
      }),
    );
    const row = await settled('stripe', 'evt_legacy_dispute');
    assert.equal(row.status, 'processed');
    assert.equal(row.fact?.snapshot, true, 'the gateway was read');

    assert.equal(await payment('stripe', 'pi_legacy_refetch'), undefined, 'not split into a second payment');
    assert.equal((await payment('stripe', 'ch_legacy_refetch'))?.status, 'disputed');
    const [outbound] = await database.sql`select sequence, gateway_charge_id, status from payment_events where payment_id = ${legacy!.id}`;
    assert.deepEqual(
      { ...outbound },
      { sequence: 2, gateway_charge_id: 'ch_legacy_refetch', status: 'disputed' },
      'the outbound sequence goes on under the charge_id the application knows',
    );
  });
});
