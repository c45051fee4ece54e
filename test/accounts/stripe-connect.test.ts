/**
 * A Stripe Connect endpoint for 50 connected accounts, through the real service: events signed by
 * the official `stripe` SDK, interleaved, shuffled and some sent twice; every kind ordered by
 * `refetch`, against a fake Stripe API (real HTTP) that answers a charge only to a request naming
 * its owner in `Stripe-Account`. Then one account's API answers 500: its breaker opens and the
 * other accounts' reads go on.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { postStripe, stripeCharge } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { connectEvent, serveConnectedCharges, shuffled } from './support.ts';

const ACCOUNTS = Array.from({ length: 50 }, (_, i) => `acct_1Connect${String(i).padStart(2, '0')}`);
const CONSECUTIVE_FAILURES = 2;

const database = useTestDatabase();
let service: TestService;
let gateway: FakeGateway;
const owners = new Map<string, { account: string; charge: Record<string, unknown> }>();
let requestsPerAccount: Map<string, number>;

setup(async () => {
  gateway = await startFakeGateway();
  requestsPerAccount = serveConnectedCharges(gateway, owners);
  const file = JSON.stringify({
    providers: {
      stripe: {
        driver: 'stripe',
        connect: true,
        api: { baseUrl: gateway.baseUrl, breaker: { consecutiveFailures: CONSECUTIVE_FAILURES, halfOpenAfterMs: 60_000 } },
        ordering: { default: 'refetch' },
        ratePerSecond: 1000,
      },
    },
  });
  const env = { INBOX_CONFIG: '/inbox.json', WEBHOOK_SECRET_STRIPE: SECRET, GATEWAY_API_KEY_STRIPE: 'sk_test_platform' };
  service = await startTestService({ database, env, files: { '/inbox.json': file } });
});

after(async () => {
  await gateway?.close();
});

async function postAll(bodies: readonly string[]): Promise<void> {
  // A few at a time, as a gateway's retries and parallel deliveries arrive.
  for (let i = 0; i < bodies.length; i += 10) {
    const answers = await Promise.all(bodies.slice(i, i + 10).map((body) => postStripe(service.baseUrl, body, SECRET)));
    for (const answer of answers) assert.equal(answer.status, 200);
  }
}

/** Per account one charge, refunded in part: a charge.succeeded and a charge.refunded, the API holding the final state. */
function eventsOfRound(round: string, created: number) {
  return ACCOUNTS.flatMap((account, i) => {
    const chargeId = `ch_${round}_${i}`;
    owners.set(chargeId, { account, charge: stripeCharge(chargeId, { amount_refunded: 500 + i }) });
    return [
      { id: `evt_${round}_${i}_paid`, body: connectEvent(account, { id: `evt_${round}_${i}_paid`, type: 'charge.succeeded', chargeId, created }) },
      {
        id: `evt_${round}_${i}_refund`,
        body: connectEvent(account, { id: `evt_${round}_${i}_refund`, type: 'charge.refunded', chargeId, created: created + 60, amountRefunded: 500 + i }),
      },
    ];
  });
}

describe('a Stripe Connect endpoint', () => {
  test("folds 50 accounts' events, interleaved, shuffled and duplicated, each payment read on behalf of its own account", async () => {
    const events = eventsOfRound('a', Math.floor(Date.now() / 1000) - 600);
    const duplicates = events.filter((_, i) => i % 3 === 0);
    await postAll(
      shuffled(
        [...events, ...duplicates].map((e) => e.body),
        33,
      ),
    );
    await waitUntilSettled(
      database.sql,
      events.map((e) => e.id),
      25_000,
    );

    const payments = await database.sql`select gateway_charge_id, account, status, amount, amount_refunded from payments where gateway_charge_id like 'ch_a_%'`;
    assert.equal(payments.length, ACCOUNTS.length);
    for (const row of payments) {
      const i = Number(row.gateway_charge_id.slice('ch_a_'.length));
      assert.deepEqual(
        [row.account, row.status, Number(row.amount), Number(row.amount_refunded)],
        [ACCOUNTS[i], 'partially_refunded', 2000, 500 + i],
        `payment ${row.gateway_charge_id}`,
      );
    }
    // Every read named an account; the platform's own account was never asked.
    assert.equal(requestsPerAccount.get('') ?? 0, 0, 'no read without Stripe-Account');
    const refetched = await database.sql`select count(*)::int as n from webhook_inbox where decision = 'refetched' or fact->>'snapshot' = 'true'`;
    assert.ok(refetched[0]!.n > 0, "the events were folded from the API's answers");
    const [counted] = await database.sql`select count(*)::int as n from webhook_inbox where event_id like 'evt_a_%'`;
    assert.equal(counted?.n, events.length, 'each duplicate stored once');
  });

  test('an account whose API answers 500 opens its own breaker; the other 49 accounts are read on', async () => {
    const broken = ACCOUNTS[7]!;
    gateway.rules.unshift((request) => (request.headers['stripe-account'] === broken ? { status: 500, json: { error: { message: 'internal' } } } : undefined));
    const events = eventsOfRound('b', Math.floor(Date.now() / 1000) - 300);
    await postAll(
      shuffled(
        events.map((e) => e.body),
        7,
      ),
    );
    const healthy = events.filter((e) => !e.id.startsWith('evt_b_7_'));
    await waitUntilSettled(
      database.sql,
      healthy.map((e) => e.id),
      25_000,
    );

    const payments =
      await database.sql`select gateway_charge_id, account, status, amount_refunded from payments where gateway_charge_id like 'ch_b_%' and account <> ${broken}`;
    assert.equal(payments.length, ACCOUNTS.length - 1);
    for (const row of payments) assert.equal(row.status, 'partially_refunded', `payment ${row.gateway_charge_id}`);

    const deferred = await waitFor(
      async () => {
        const rows = await database.sql`select event_id, status, last_error from webhook_inbox where event_id like 'evt_b_7_%'`;
        return rows.length === 2 && rows.some((r) => String(r.last_error).includes('BreakerOpenError')) ? rows : undefined;
      },
      { message: "the broken account's events to be deferred by its open breaker" },
    );
    assert.ok(
      deferred.every((r) => r.status === 'pending'),
      'its events wait for the breaker, none is settled without its read',
    );
    assert.match(deferred.map((r) => String(r.last_error)).join('\n'), new RegExp(`account ${broken}`));
    assert.ok((requestsPerAccount.get(broken) ?? 0) <= CONSECUTIVE_FAILURES + 1, `the open breaker stops calls for ${broken}`);
  });
});
