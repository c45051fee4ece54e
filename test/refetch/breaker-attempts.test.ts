import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

// The real service on a real database, its gateway API a real HTTP server on 127.0.0.1. Workers
// make 3 attempts in all (test/support/config.ts), 1 s apart.
const SECRET = 'whsec_breaker_attempts_secret';
const HALF_OPEN_AFTER_MS = 3000;
const MAX_ATTEMPTS = 3;

const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;

setup(async () => {
  gateway = await startFakeGateway();
  const file = JSON.stringify({
    providers: {
      stripe: {
        driver: 'stripe',
        api: { baseUrl: gateway.baseUrl, breaker: { consecutiveFailures: 2, halfOpenAfterMs: HALF_OPEN_AFTER_MS } },
        ordering: { default: 'refetch' },
      },
    },
  });
  const env = { INBOX_ROLE: 'all', INBOX_CONFIG: '/inbox.json', WEBHOOK_SECRET_STRIPE: SECRET, GATEWAY_API_KEY_STRIPE: 'sk_test_breaker_attempts' };
  service = await startTestService({ database, env, files: { '/inbox.json': file }, worker: { maxAttempts: MAX_ATTEMPTS } });
});

after(async () => {
  await gateway?.close();
});

async function inboxRow(eventId: string) {
  const [row] = await database.sql<{ status: string; attempts: number; last_error: string | null }[]>`
    select status, attempts, last_error from webhook_inbox where provider = 'stripe' and event_id = ${eventId}`;
  return row;
}

describe('an event deferred while the circuit breaker is open', () => {
  test('keeps the attempts it has left: WORKER_MAX_ATTEMPTS bounds its attempts in all, the deferral grants no new ones', async () => {
    // Two 503s (attempts 1 and 2) open the breaker; attempt 3, the last, finds it open and is deferred, not spent.
    gateway.rules.push((request) => (request.pathname === '/v1/charges/ch_budget' ? { status: 503, json: { error: { message: 'maintenance' } } } : undefined));
    const created = Math.floor(Date.now() / 1000);
    const body = chargeEvent({ id: 'evt_budget', type: 'charge.refunded', chargeId: 'ch_budget', created, amountRefunded: 2000 });
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    const deferred = await waitFor(
      async () => {
        const row = await inboxRow('evt_budget');
        return row?.last_error?.includes('BreakerOpenError') ? row : undefined;
      },
      { message: 'the event to be deferred' },
    );
    assert.deepEqual([deferred.status, deferred.attempts], ['pending', 2]);

    // The gateway is back but does not have the charge (a test key against live data): a 404 is
    // gateway_rejected, retried on the normal schedule. The event had one attempt left: the
    // half-open trial is that attempt, and the event ends failed for a human to look at.
    gateway.rules.length = 0;
    const failed = await waitFor(
      async () => {
        const row = await inboxRow('evt_budget');
        return row?.status === 'failed' ? row : undefined;
      },
      { message: 'the event to end failed', timeoutMs: HALF_OPEN_AFTER_MS + 20_000 },
    );
    assert.equal(failed.attempts, MAX_ATTEMPTS, `attempts in all: WORKER_MAX_ATTEMPTS (${MAX_ATTEMPTS}), not a fresh budget after the deferral`);
    assert.match(failed.last_error ?? '', /GatewayRejectedError: .* answered 404/);
    assert.equal(gateway.requests.filter((r) => r.pathname === '/v1/charges/ch_budget').length, MAX_ATTEMPTS, 'one gateway call per attempt');
  });
});
