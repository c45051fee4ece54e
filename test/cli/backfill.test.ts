import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { createApplyCounter } from '../support/apply-counter.ts';
import { useTestDatabase } from '../support/database.ts';
import type { FakeGateway, RecordedRequest } from '../support/fake-gateway.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { paymentOf, transitionsOf, waitUntilSettled } from '../processing/harness.ts';
import { useBackfillService } from './backfill-fixture.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
const SECRET = 'whsec_backfill_cli_test';
const API_KEY = 'sk_test_backfill_cli';
const PAGE_SIZE = 3;
const RETRY_AFTER_SECONDS = 1;
const now = Math.floor(Date.now() / 1000);
const hoursAgo = (hours: number) => now - hours * 3600;

// What the Stripe account holds: each event as GET /v1/events lists it and a webhook would POST it.
const account = [
  { id: 'evt_bf_a_paid', type: 'charge.succeeded', chargeId: 'ch_bf_a', created: hoursAgo(50) },
  { id: 'evt_bf_b_paid', type: 'charge.succeeded', chargeId: 'ch_bf_b', created: hoursAgo(49) },
  { id: 'evt_bf_c_paid', type: 'charge.succeeded', chargeId: 'ch_bf_c', created: hoursAgo(30) },
  { id: 'evt_bf_a_refund', type: 'charge.refunded', chargeId: 'ch_bf_a', created: hoursAgo(20), amountRefunded: 500 },
  { id: 'evt_bf_b_dispute', type: 'charge.dispute.created', chargeId: 'ch_bf_b', created: hoursAgo(10) },
  { id: 'evt_bf_c_refund', type: 'charge.refunded', chargeId: 'ch_bf_c', created: hoursAgo(5), amountRefunded: 2000 },
  { id: 'evt_bf_b_lost', type: 'charge.dispute.closed', chargeId: 'ch_bf_b', created: hoursAgo(2), disputeStatus: 'lost' as const },
].map((e) => ({ ...e, body: chargeEvent(e) }));
// Older than --since 72h: the API's created[gte] filter leaves it out.
const tooOld = { id: 'evt_bf_too_old', body: chargeEvent({ id: 'evt_bf_too_old', type: 'charge.succeeded', chargeId: 'ch_bf_old', created: hoursAgo(100) }) };
// The one event the inbox got by signed webhook before the backfill.
const delivered = account[0]!;
const missing = account.filter((e) => e !== delivered).map((e) => e.id);

/**
 * Stripe's GET /v1/events, as its API reference and stripe-node's EventListParams describe it:
 * newest first, created[gte], starting_after, has_more. Pages of PAGE_SIZE (Stripe allows a page
 * shorter than `limit`), so seven events take three pages; the first request for page two is
 * answered 429 with Retry-After, in every run.
 */
function stripeEventsApi(gateway: FakeGateway) {
  const listed = [...account, tooOld].map((e) => JSON.parse(e.body) as { id: string; created: number }).sort((a, b) => b.created - a.created);
  let rateLimitedOnce = false;
  gateway.rules.push((request: RecordedRequest) => {
    if (request.pathname !== '/v1/events') return undefined;
    if (request.headers.authorization !== `Bearer ${API_KEY}`) return { status: 401, json: { error: { message: 'Invalid API Key' } } };
    const query = new URL(request.path, 'http://x').searchParams;
    const gte = Number(query.get('created[gte]'));
    const inWindow = listed.filter((e) => e.created >= gte);
    const after = query.get('starting_after');
    // Once per run: a run starts at the first page.
    if (after === null) rateLimitedOnce = false;
    if (after !== null && !rateLimitedOnce) {
      rateLimitedOnce = true;
      return { status: 429, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) }, json: { error: { type: 'rate_limit_error' } } };
    }
    const start = after === null ? 0 : inWindow.findIndex((e) => e.id === after) + 1;
    const data = inWindow.slice(start, start + PAGE_SIZE);
    return { status: 200, json: { object: 'list', url: '/v1/events', has_more: start + PAGE_SIZE < inWindow.length, data } };
  });
}

const applies = createApplyCounter();
const backfill = useBackfillService(database, {
  provider: 'stripe',
  // occurred_at ordering: the fake serves only the event list, no charges to re-read.
  providerConfig: { ordering: { default: 'occurred_at' } },
  env: { WEBHOOK_SECRET_STRIPE: SECRET, GATEWAY_API_KEY_STRIPE: API_KEY },
  serve: stripeEventsApi,
  handlers: createHandlerRegistry([applies.handler()]),
});

const inboxRowsBySource = () => database.sql`select event_id, source, status, attempts, received_at, verification from webhook_inbox order by event_id`;

describe('inboxctl backfill stripe', () => {
  test('stores exactly the events the inbox missed, with source backfill, processed once by the workers; a second run stores nothing', async () => {
    assert.equal((await postStripe(backfill.baseUrl, delivered.body, SECRET)).status, 200);
    const [before] = await waitUntilSettled(database.sql, [delivered.id]);

    const dry = await runInboxctl(['backfill', 'stripe', '--since', '72h', '--dry-run', '--json'], backfill.env);
    assert.equal(dry.code, 1, dry.stderr);
    assert.deepEqual(
      { ...dry.json<Record<string, unknown>>(), since: undefined },
      {
        provider: 'stripe',
        dryRun: true,
        pages: 3,
        listed: 7,
        alreadyPresent: 1,
        stored: 6,
        storedEventIds: missing,
        rateLimitedWaits: 1,
        refused: [],
        since: undefined,
      },
    );
    assert.deepEqual(
      (await inboxRowsBySource()).map((r) => r.event_id),
      [delivered.id],
      'the dry run stored nothing',
    );

    const run = await runInboxctl(['backfill', 'stripe', '--since', '72h'], backfill.env);
    assert.equal(run.code, 1, `missing events are exit 1 (attention); stderr: ${run.stderr}`);
    assert.match(run.out, /3 pages read/);
    assert.match(run.out, /listed 7, already present 1, stored 6/);
    assert.match(run.out, /rate limited 1 time/);
    assert.match(run.stderr, /the stripe API answered 429 \(\{"error":\{"type":"rate_limit_error"\}\}\); waiting 1 s before asking again/);

    // The request after each 429 waited out its Retry-After (a lower bound: load only adds to it).
    const pageRequests = backfill.gateway.requests.filter((r) => r.pathname === '/v1/events');
    for (const [i, request] of pageRequests.entries()) {
      if (i > 0 && pageRequests[i - 1]!.path === request.path && request.path.includes('starting_after')) {
        assert.ok(request.arrivedAtMs - pageRequests[i - 1]!.arrivedAtMs >= RETRY_AFTER_SECONDS * 1000 - 5, 'the retry came after Retry-After');
      }
    }
    assert.ok(pageRequests.every((r) => new URL(r.path, 'http://x').searchParams.get('limit') === '100'));

    const settled = await waitUntilSettled(
      database.sql,
      account.map((e) => e.id),
    );
    assert.ok(
      settled.every((row) => row.status === 'processed'),
      JSON.stringify(settled),
    );
    const rows = await inboxRowsBySource();
    assert.deepEqual(
      rows
        .filter((r) => r.source === 'backfill')
        .map((r) => r.event_id)
        .sort(),
      [...missing].sort(),
    );
    const webhookRow = rows.find((r) => r.event_id === delivered.id)!;
    assert.equal(webhookRow.source, 'webhook');
    assert.equal(webhookRow.verification.scheme, 'stripe-v1', 'the delivered event keeps its signature proof');
    for (const row of rows.filter((r) => r.source === 'backfill')) {
      // The API is the proof: the page it was listed from (a path of GET /v1/events) and when.
      assert.equal(row.verification.scheme, 'gateway-api');
      assert.match(row.verification.endpoint, /^\/v1\/events\?/);
      assert.ok(!Number.isNaN(Date.parse(row.verification.fetchedAt)));
    }
    assert.deepEqual(webhookRow.received_at, (await database.sql`select received_at from webhook_inbox where id = ${before!.id}`)[0]!.received_at);
    assert.ok(!rows.some((r) => r.event_id === tooOld.id), 'older than --since: not listed');
    for (const e of account) assert.equal(applies.appliedOf(e.id), 1, `${e.id} applied once`);

    assert.deepEqual(
      await Promise.all(
        ['ch_bf_a', 'ch_bf_b', 'ch_bf_c'].map(async (charge) => [
          (await paymentOf(database.sql, charge))?.status,
          (await transitionsOf(database.sql, charge)).length,
        ]),
      ),
      [
        ['partially_refunded', 2],
        ['charged_back', 3],
        ['refunded', 2],
      ],
    );

    // An operator reading one event sees how it arrived.
    const shownBackfilled = await runInboxctl(['show', 'stripe', 'evt_bf_b_lost'], backfill.env);
    assert.match(shownBackfilled.out, /received +\S+ \(.* ago\) by inboxctl backfill/);
    const shownDelivered = await runInboxctl(['show', 'stripe', delivered.id], backfill.env);
    assert.doesNotMatch(shownDelivered.out, /backfill/);
    assert.equal((await runInboxctl(['show', 'stripe', 'evt_bf_b_lost', '--json'], backfill.env)).json().source, 'backfill');

    // Retention purged one payload; its dedupe key stays, so the event is still present.
    await database.sql`delete from webhook_inbox where event_id = 'evt_bf_a_paid'`;
    const dryAgain = await runInboxctl(['backfill', 'stripe', '--since', '72h', '--dry-run', '--json'], backfill.env);
    assert.equal(dryAgain.code, 0, dryAgain.stderr);
    assert.deepEqual(
      { alreadyPresent: dryAgain.json().alreadyPresent, stored: dryAgain.json().stored },
      { alreadyPresent: 7, stored: 0 },
      'a purged payload whose key is kept is not missing',
    );
    const again = await runInboxctl(['backfill', 'stripe', '--since', '72h', '--json'], backfill.env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      { listed: again.json().listed, alreadyPresent: again.json().alreadyPresent, stored: again.json().stored },
      { listed: 7, alreadyPresent: 7, stored: 0 },
    );
    assert.equal((await database.sql`select count(*)::int as n from webhook_inbox`)[0]!.n, 6);
    assert.equal((await database.sql`select count(*)::int as n from webhook_inbox_conflicts`)[0]!.n, 0, 'present events are not touched');
  });

  test('a provider without an API key, or a gateway whose API lists no events, is exit 2 naming what is missing', async () => {
    const { GATEWAY_API_KEY_STRIPE: _key, INBOX_CONFIG: _file, ...withoutKey } = backfill.env;
    const noKey = await runInboxctl(['backfill', 'stripe', '--since', '1h'], withoutKey);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /GATEWAY_API_KEY_STRIPE/);
    const unknown = await runInboxctl(['backfill', 'nope', '--since', '1h'], backfill.env);
    assert.equal(unknown.code, 2);
    const noSince = await runInboxctl(['backfill', 'stripe'], backfill.env);
    assert.equal(noSince.code, 2);
    assert.match(noSince.stderr, /--since is required/);
    // A year mistyped ahead can list nothing; exit 0 would tell a cron nothing was missing.
    const future = await runInboxctl(['backfill', 'stripe', '--since', '2999-01-01T00:00:00Z'], backfill.env);
    assert.equal(future.code, 2, future.out);
    assert.match(future.stderr, /--since: 2999-01-01T00:00:00\.000Z is in the future/);
  });

  test('a 429 asking to wait longer than a backfill waits stops the run (exit 4), saying how long and from when to run it again', async () => {
    const asked = backfill.gateway.requests.length;
    // The answer repeats the key and runs long: quoted, but bounded and with the key masked.
    const answer = { error: { type: 'rate_limit_error', message: `Too many requests with ${API_KEY}.${' Slow down.'.repeat(40)}` } };
    const rateLimited = (request: RecordedRequest) =>
      request.pathname === '/v1/events' ? { status: 429, headers: { 'retry-after': '3600' }, json: answer } : undefined;
    backfill.gateway.rules.unshift(rateLimited);
    try {
      const startedAt = Date.now();
      const run = await runInboxctl(['backfill', 'stripe', '--since', '1h', '--dry-run'], backfill.env);
      assert.equal(run.code, 4, run.stderr);
      assert.match(
        run.stderr,
        /the stripe API answered 429 \(\{"error":\{"type":"rate_limit_error","message":"Too many requests with \[api key\]\. Slow down\./,
      );
      assert.match(run.stderr, /Slow down[^)]*…\); it asks to wait 3600 s \(Retry-After\)/, 'the answer is cut, and says so');
      assert.ok(!run.stderr.includes(API_KEY), 'the key is never quoted');
      assert.ok(run.stderr.length < 1000, run.stderr);
      const when = /not before (\S+Z)/.exec(run.stderr)?.[1];
      assert.ok(when, run.stderr);
      assert.ok(Math.abs(Date.parse(when) - (startedAt + 3_600_000)) < 60_000, `${when} is about an hour from now`);
      assert.equal(backfill.gateway.requests.length - asked, 1, 'asked once, not again at once');
    } finally {
      backfill.gateway.rules.splice(backfill.gateway.rules.indexOf(rateLimited), 1);
    }
  });

  test('a rejected key stops the run with exit 4 and stores nothing', async () => {
    const run = await runInboxctl(['backfill', 'stripe', '--since', '1h'], { ...backfill.env, GATEWAY_API_KEY_STRIPE: 'sk_test_wrong' });
    assert.equal(run.code, 4, run.stderr);
    assert.match(run.stderr, /401/);
  });
});
