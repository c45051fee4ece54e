import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { stripeApi } from '../../src/gateways/stripe/api.ts';
import { BreakerOpenError, GatewayRejectedError, GatewayRetryAfterError, GatewayUnavailableError, retryNotBefore } from '../../src/refetch/errors.ts';
import type { BreakerState, RefetchMetrics, RefetchOutcome } from '../../src/refetch/metrics.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import type { GatewayApiTarget } from '../../src/refetch/settings.ts';
import { type FakeGateway, earliestArrivalTooSoon, maxRequestsInWindow, startFakeGateway } from '../support/fake-gateway.ts';
import { stripeCharge } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const KEY = 'sk_test_refetch_key';
let gateway: FakeGateway;

function target(overrides: Partial<GatewayApiTarget> = {}): GatewayApiTarget {
  return {
    provider: 'stripe',
    gateway: stripeApi,
    baseUrl: gateway.baseUrl,
    key: KEY,
    settings: {},
    ratePerSecond: 1000,
    timeoutMs: 2000,
    breaker: { consecutiveFailures: 3, halfOpenAfterMs: 300 },
    ...overrides,
  };
}

function recordingMetrics() {
  const calls: { provider: string; outcome: RefetchOutcome }[] = [];
  const states: BreakerState[] = [];
  const metrics: RefetchMetrics = {
    call: (provider, outcome) => calls.push({ provider, outcome }),
    breakerState: (_provider, state) => states.push(state),
    accountBreakerChanged: () => {},
  };
  return { metrics, calls, states };
}

before(async () => {
  gateway = await startFakeGateway();
});

after(async () => {
  await gateway?.close();
});

beforeEach(() => {
  gateway.requests.length = 0;
  gateway.rules.length = 0;
  gateway.resources.clear();
});

describe('fetchCharge', () => {
  test('reads the charge with the provider key and stamps observedAt from the injected clock', async () => {
    gateway.resources.set('/v1/charges/ch_ok', stripeCharge('ch_ok', { amount_refunded: 500 }));
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
    const snapshot = await refetcher.fetchCharge('stripe', 'ch_ok');
    assert.deepEqual(snapshot, { chargeId: 'ch_ok', status: 'partially_refunded', amount: 2000, amountRefunded: 500, currency: 'BRL', observedAt: NOW });
    assert.equal(gateway.requests.length, 1);
    assert.equal(gateway.requests[0]!.headers.authorization, `Bearer ${KEY}`);
    assert.match(String(gateway.requests[0]!.headers['user-agent']), /webhook-inbox/);
  });

  test('404 and 401 are rejections a human must look at, with a hint; they never open the breaker', async () => {
    const { metrics, calls, states } = recordingMetrics();
    const refetcher = createRefetcher({ targets: [target({ breaker: { consecutiveFailures: 2, halfOpenAfterMs: 60_000 } })], clock: () => NOW, metrics });
    for (let i = 0; i < 3; i += 1) {
      await assert.rejects(refetcher.fetchCharge('stripe', 'ch_missing'), (error: unknown) => {
        assert.ok(error instanceof GatewayRejectedError);
        assert.equal(error.status, 404);
        assert.equal(error.retryable, false);
        assert.match(error.message, /test vs live/);
        return true;
      });
    }
    gateway.rules.push(() => ({ status: 401, json: { error: { message: 'Invalid API Key provided: sk_test_****' } } }));
    await assert.rejects(
      refetcher.fetchCharge('stripe', 'ch_any'),
      (error: unknown) => error instanceof GatewayRejectedError && /GATEWAY_API_KEY_/.test(error.message),
    );
    assert.equal(refetcher.breakerState('stripe'), 'closed');
    assert.deepEqual(states, ['closed']);
    assert.deepEqual(
      calls.map((c) => c.outcome),
      ['not_found', 'not_found', 'not_found', 'error'],
    );
  });

  test('5xx, and 429 without Retry-After, are unavailable (retryable)', async () => {
    const { metrics, calls } = recordingMetrics();
    const refetcher = createRefetcher({ targets: [target({ breaker: { consecutiveFailures: 10, halfOpenAfterMs: 60_000 } })], clock: () => NOW, metrics });
    gateway.rules.push((request) => (request.pathname.endsWith('ch_busy') ? { status: 429, json: { error: { type: 'rate_limit_error' } } } : undefined));
    gateway.rules.push(() => ({ status: 502, text: '<html>Bad Gateway</html>' }));
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_busy'), (error: unknown) => {
      assert.ok(error instanceof GatewayUnavailableError);
      assert.equal(error.status, 429);
      assert.equal(error.retryable, true);
      return true;
    });
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_down'), (error: unknown) => error instanceof GatewayUnavailableError && error.status === 502);
    assert.deepEqual(
      calls.map((c) => c.outcome),
      ['rate_limited', 'error'],
    );
  });

  test('a gateway that does not answer within timeoutMs is unavailable (the request is aborted)', async () => {
    gateway.rules.push(() => ({ hold: true }));
    const refetcher = createRefetcher({ targets: [target({ timeoutMs: 200 })], clock: () => NOW });
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_slow'), (error: unknown) => {
      assert.ok(error instanceof GatewayUnavailableError);
      assert.equal(error.status, undefined);
      assert.match(error.message, /within 200 ms/);
      return true;
    });
    gateway.releaseHeld();
  });

  test("the caller's abort (job expired, shutdown) ends the call with its own reason and is no gateway failure", async () => {
    gateway.rules.push(() => ({ hold: true }));
    const refetcher = createRefetcher({ targets: [target({ breaker: { consecutiveFailures: 1, halfOpenAfterMs: 60_000 } })], clock: () => NOW });
    const controller = new AbortController();
    const call = refetcher.fetchCharge('stripe', 'ch_stopped', controller.signal);
    await waitFor(() => gateway.heldCount() === 1, { message: 'the request to reach the gateway' });
    controller.abort(new Error('job expired'));
    await assert.rejects(call, /job expired/);
    assert.equal(refetcher.breakerState('stripe'), 'closed');
    gateway.releaseHeld();
  });

  test('a refused connection is unavailable', async () => {
    const closed = await startFakeGateway();
    const baseUrl = closed.baseUrl;
    await closed.close();
    const refetcher = createRefetcher({ targets: [target({ baseUrl })], clock: () => NOW });
    await assert.rejects(
      refetcher.fetchCharge('stripe', 'ch_x'),
      (error: unknown) => error instanceof GatewayUnavailableError && /failed before an answer/.test(error.message),
    );
  });

  test('a 200 that is not JSON, or JSON that is not a charge, is a rejection (wrong base URL or API change)', async () => {
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
    gateway.rules.push((request) => (request.pathname.endsWith('ch_html') ? { status: 200, text: '<!doctype html><title>Welcome</title>' } : undefined));
    gateway.resources.set('/v1/charges/ch_odd', { object: 'list', data: [] });
    await assert.rejects(
      refetcher.fetchCharge('stripe', 'ch_html'),
      (error: unknown) => error instanceof GatewayRejectedError && /not JSON/.test(error.message),
    );
    await assert.rejects(
      refetcher.fetchCharge('stripe', 'ch_odd'),
      (error: unknown) => error instanceof GatewayRejectedError && /does not understand/.test(error.message),
    );
  });

  test('a provider without a gateway API configured is a programming error, said plainly', async () => {
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
    assert.equal(refetcher.has('stripe'), true);
    assert.equal(refetcher.has('github'), false);
    await assert.rejects(refetcher.fetchCharge('github', 'x'), /No gateway API is configured for provider "github"/);
  });
});

describe('circuit breaker', () => {
  test('opens after consecutive failures, sends nothing while open, and closes after a successful half-open call', async () => {
    const { metrics, calls, states } = recordingMetrics();
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW, metrics });
    gateway.resources.set('/v1/charges/ch_b', stripeCharge('ch_b'));
    gateway.rules.push(() => ({ status: 503, json: { error: { message: 'maintenance' } } }));
    for (let i = 0; i < 3; i += 1) {
      await assert.rejects(refetcher.fetchCharge('stripe', 'ch_b'), GatewayUnavailableError);
    }
    assert.equal(refetcher.breakerState('stripe'), 'open');
    const openedBy = Date.now();
    let halfOpensAt: Date | undefined;
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_b'), (error: unknown) => {
      assert.ok(error instanceof BreakerOpenError);
      assert.equal(error.retryable, true);
      halfOpensAt = error.halfOpensAt;
      return true;
    });
    assert.equal(gateway.requests.length, 3, 'no request while the breaker is open');
    assert.ok(halfOpensAt!.getTime() <= openedBy + 300 && halfOpensAt!.getTime() > openedBy - 1000, 'half-opens halfOpenAfterMs after opening');

    gateway.rules.length = 0; // the gateway is back
    await waitFor(() => Date.now() >= halfOpensAt!.getTime(), { message: 'the half-open time' });
    const snapshot = await refetcher.fetchCharge('stripe', 'ch_b');
    assert.equal(snapshot.status, 'paid');
    assert.equal(refetcher.breakerState('stripe'), 'closed');
    assert.deepEqual(states, ['closed', 'open', 'half_open', 'closed']);
    assert.deepEqual(
      calls.map((c) => c.outcome),
      ['error', 'error', 'error', 'breaker_open', 'ok'],
    );
  });

  /** A breaker (opened by one failure, for 200 ms) that a 500 opened, its half-open time now come; the gateway still answers 500. */
  async function breakerDueToHalfOpen(chargeId: string) {
    const { metrics, states } = recordingMetrics();
    const refetcher = createRefetcher({ targets: [target({ breaker: { consecutiveFailures: 1, halfOpenAfterMs: 200 } })], clock: () => NOW, metrics });
    gateway.rules.push(() => ({ status: 500, json: {} }));
    await assert.rejects(refetcher.fetchCharge('stripe', chargeId), GatewayUnavailableError);
    const open = await refetcher.fetchCharge('stripe', chargeId).catch((error: unknown) => error);
    assert.ok(open instanceof BreakerOpenError);
    await waitFor(() => Date.now() >= open.halfOpensAt.getTime(), { message: 'the half-open time' });
    return { refetcher, states, open };
  }

  test('a failed half-open trial opens it again for another period', async () => {
    const { refetcher, states, open: first } = await breakerDueToHalfOpen('ch_c');
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_c'), GatewayUnavailableError, 'the trial call reaches the gateway and fails');
    const second = await refetcher.fetchCharge('stripe', 'ch_c').catch((error: unknown) => error);
    assert.ok(second instanceof BreakerOpenError);
    assert.ok(second.halfOpensAt > first.halfOpensAt);
    assert.equal(gateway.requests.length, 2);
    assert.deepEqual(states, ['closed', 'open', 'half_open', 'open']);
  });

  test("a half-open trial the caller aborts neither closes the breaker nor opens it: the gateway's own answer to the trial decides", async () => {
    const { refetcher, states } = await breakerDueToHalfOpen('ch_t');

    // The trial reaches a gateway that has not answered yet when the job is stopped.
    gateway.rules.length = 0;
    gateway.rules.push(() => ({ hold: true }));
    gateway.resources.set('/v1/charges/ch_t', stripeCharge('ch_t'));
    const controller = new AbortController();
    const trial = refetcher.fetchCharge('stripe', 'ch_t', controller.signal);
    await waitFor(() => gateway.heldCount() === 1, { message: 'the trial call to reach the gateway' });
    controller.abort(new Error('job expired'));
    await assert.rejects(trial, /job expired/, 'the caller stops waiting at once, with its own reason');
    assert.equal(refetcher.breakerState('stripe'), 'half_open', 'an abort is no evidence that the gateway is back');

    gateway.releaseHeld();
    await waitFor(() => refetcher.breakerState('stripe') === 'closed', { message: "the trial's answer to close the breaker" });
    assert.deepEqual(states, ['closed', 'open', 'half_open', 'closed']);
  });

  test('one breaker per provider: one gateway failing does not stop another', async () => {
    const refetcher = createRefetcher({
      targets: [
        target({ provider: 'stripe-br', breaker: { consecutiveFailures: 1, halfOpenAfterMs: 60_000 } }),
        target({ provider: 'stripe-us', baseUrl: `${gateway.baseUrl}/us` }),
      ],
      clock: () => NOW,
    });
    gateway.resources.set('/us/v1/charges/ch_us', stripeCharge('ch_us'));
    gateway.rules.push((request) => (request.pathname.startsWith('/v1/') ? { status: 503, json: {} } : undefined));
    await assert.rejects(refetcher.fetchCharge('stripe-br', 'ch_br'), GatewayUnavailableError);
    await assert.rejects(refetcher.fetchCharge('stripe-br', 'ch_br'), BreakerOpenError);
    assert.equal((await refetcher.fetchCharge('stripe-us', 'ch_us')).status, 'paid');
  });
});

describe('Retry-After', () => {
  const busy = (retryAfter: string, status = 429) => ({ status, headers: { 'retry-after': retryAfter }, json: { error: { type: 'rate_limit_error' } } });

  test('a 429 with Retry-After: no call to that gateway is sent before then, for any charge; the first after it is', async () => {
    const { metrics, calls } = recordingMetrics();
    let now = NOW;
    const refetcher = createRefetcher({ targets: [target()], clock: () => now, metrics });
    gateway.resources.set('/v1/charges/ch_other', stripeCharge('ch_other'));
    gateway.rules.push((request) => (request.pathname.endsWith('ch_limited') ? busy('7') : undefined));
    const limited = await refetcher.fetchCharge('stripe', 'ch_limited').catch((error: unknown) => error);
    assert.ok(limited instanceof GatewayRetryAfterError, String(limited));
    assert.equal(limited.status, 429);
    assert.deepEqual(retryNotBefore(limited), new Date(NOW.getTime() + 7000));

    now = new Date(NOW.getTime() + 6999);
    const held = await refetcher.fetchCharge('stripe', 'ch_other').catch((error: unknown) => error);
    assert.ok(held instanceof GatewayRetryAfterError, String(held));
    assert.equal(held.status, undefined, 'not sent, so no answer');
    assert.deepEqual(retryNotBefore(held), new Date(NOW.getTime() + 7000));
    assert.match(held.message, /Retry-After/);
    assert.equal(gateway.requests.length, 1, 'nothing sent before Retry-After');

    now = new Date(NOW.getTime() + 7000);
    assert.equal((await refetcher.fetchCharge('stripe', 'ch_other')).status, 'paid');
    assert.deepEqual(
      calls.map((c) => c.outcome),
      ['rate_limited', 'retry_after', 'ok'],
    );
    assert.equal(refetcher.breakerState('stripe'), 'closed');
  });

  test('a 503 with Retry-After as an HTTP-date (any of the three forms) waits until that date', async () => {
    for (const date of ['Sun, 01 Mar 2026 12:02:00 GMT', 'Sunday, 01-Mar-26 12:02:00 GMT', 'Sun Mar  1 12:02:00 2026']) {
      gateway.rules.length = 0;
      gateway.rules.push(() => busy(date, 503));
      const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
      const error = await refetcher.fetchCharge('stripe', 'ch_maintenance').catch((caught: unknown) => caught);
      assert.ok(error instanceof GatewayRetryAfterError, `${date}: ${String(error)}`);
      assert.equal(error.status, 503);
      assert.deepEqual(retryNotBefore(error), new Date('2026-03-01T12:02:00.000Z'), date);
    }
  });

  test('a Retry-After that is neither whole seconds nor an HTTP-date is ignored, not read by Date.parse as a year (+3600 → year 3600)', async () => {
    for (const value of ['+3600', '1.5', '-1', '30s', '2026-03-01T13:00:00Z']) {
      gateway.rules.length = 0;
      gateway.rules.push(() => busy(value));
      const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
      const error = await refetcher.fetchCharge('stripe', 'ch_odd_header').catch((caught: unknown) => caught);
      assert.ok(error instanceof GatewayUnavailableError, `${value}: ${String(error)}`);
      assert.equal(retryNotBefore(error), undefined, value);
      await refetcher.fetchCharge('stripe', 'ch_odd_header').catch(() => undefined);
    }
    assert.equal(gateway.requests.length, 10, 'no wait was taken from them: every call was sent');
  });

  test('an absurd Retry-After (a day) is capped at 5 minutes: a misconfigured proxy cannot park every event for a day', async () => {
    gateway.rules.push(() => busy('86400'));
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
    const error = await refetcher.fetchCharge('stripe', 'ch_parked').catch((caught: unknown) => caught);
    assert.deepEqual(retryNotBefore(error), new Date(NOW.getTime() + 5 * 60_000));
  });
});

describe('rate limit', () => {
  test('a burst of 15 calls at 5 per second reaches the gateway at most 5 per one-second window', async () => {
    const limit = 5;
    const refetcher = createRefetcher({ targets: [target({ ratePerSecond: limit })], clock: () => NOW });
    for (let i = 0; i < 15; i += 1) gateway.resources.set(`/v1/charges/ch_r${i}`, stripeCharge(`ch_r${i}`));
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: 15 }, (_, i) => refetcher.fetchCharge('stripe', `ch_r${i}`)));
    assert.equal(results.length, 15);
    assert.equal(gateway.requests.length, 15);
    // Counted from the start, not in windows between arrivals: a busy machine delays and bunches
    // arrivals (a window check failed at load 11–15), but nothing can make one arrive early.
    assert.equal(earliestArrivalTooSoon(gateway.requests, start, limit, 1000), undefined);
    assert.ok(maxRequestsInWindow(gateway.requests, 100) >= 2, 'calls within the limit are not spread out needlessly');
  });

  test('every HTTP call takes a token: a disputed Stripe charge (two calls) counts twice', async () => {
    const refetcher = createRefetcher({ targets: [target({ ratePerSecond: 2 })], clock: () => NOW });
    gateway.resources.set('/v1/charges/ch_d1', stripeCharge('ch_d1', { disputed: true }));
    gateway.resources.set('/v1/charges/ch_d2', stripeCharge('ch_d2', { disputed: true }));
    gateway.resources.set('/v1/disputes', { object: 'list', data: [{ id: 'dp_1', object: 'dispute', status: 'needs_response' }], has_more: false });
    const start = performance.now();
    const snapshots = await Promise.all([refetcher.fetchCharge('stripe', 'ch_d1'), refetcher.fetchCharge('stripe', 'ch_d2')]);
    assert.deepEqual(
      snapshots.map((s) => s.status),
      ['disputed', 'disputed'],
    );
    assert.equal(gateway.requests.length, 4);
    assert.equal(earliestArrivalTooSoon(gateway.requests, start, 2, 1000), undefined);
  });
});
