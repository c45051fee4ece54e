/**
 * The account an event names flows with it: webhook_inbox.account, payment_facts.account,
 * payments.account, payment_events.account and the outbound event's `payment.account` (feed and
 * payment lookup). A direct integration's event (no `account`) has null everywhere. Signed by the
 * official `stripe` SDK.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { API_TOKEN, type FeedPage, feedOnceItHolds } from '../api/feed-client.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';

const database = useTestDatabase();
const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_API_TOKEN: API_TOKEN } });

/** A Stripe event as a Connect endpoint receives it: the connected account at the top level. */
function connectEvent(account: string | undefined, options: Parameters<typeof chargeEvent>[0]): string {
  const event = JSON.parse(chargeEvent(options)) as Record<string, unknown>;
  return JSON.stringify(account === undefined ? event : { ...event, account });
}

describe('the account of an event', () => {
  test('is kept on the event, its fact, its payment and every outbound event of it; null for a direct integration', async () => {
    const created = 1_760_000_000;
    const posts = [
      connectEvent('acct_1Connected', { id: 'evt_acct_1', type: 'charge.succeeded', chargeId: 'ch_acct_1', created }),
      connectEvent('acct_1Connected', { id: 'evt_acct_2', type: 'charge.refunded', chargeId: 'ch_acct_1', created: created + 60, amountRefunded: 2000 }),
      connectEvent(undefined, { id: 'evt_direct_1', type: 'charge.succeeded', chargeId: 'ch_direct_1', created }),
    ];
    for (const body of posts) assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    await waitUntilSettled(database.sql, ['evt_acct_1', 'evt_acct_2', 'evt_direct_1']);

    const inbox = await database.sql`select event_id, account from webhook_inbox order by event_id`;
    assert.deepEqual(
      inbox.map((r) => [r.event_id, r.account]),
      [
        ['evt_acct_1', 'acct_1Connected'],
        ['evt_acct_2', 'acct_1Connected'],
        ['evt_direct_1', null],
      ],
    );
    const facts = await database.sql`select event_id, account from payment_facts order by event_id`;
    assert.deepEqual(
      facts.map((r) => [r.event_id, r.account]),
      [
        ['evt_acct_1', 'acct_1Connected'],
        ['evt_acct_2', 'acct_1Connected'],
        ['evt_direct_1', null],
      ],
    );
    const payments = await database.sql`select gateway_charge_id, account, status from payments order by gateway_charge_id`;
    assert.deepEqual(
      payments.map((r) => [r.gateway_charge_id, r.account, r.status]),
      [
        ['ch_acct_1', 'acct_1Connected', 'refunded'],
        ['ch_direct_1', null, 'paid'],
      ],
    );

    const events = await feedOnceItHolds(service.baseUrl, 3);
    assert.deepEqual(events.map((e) => [e.payment.charge_id, e.sequence, e.payment.account]).sort(), [
      ['ch_acct_1', 1, 'acct_1Connected'],
      ['ch_acct_1', 2, 'acct_1Connected'],
      ['ch_direct_1', 1, null],
    ]);
    const lookup = await fetch(`${service.baseUrl}/api/v1/payments/stripe/ch_acct_1`, { headers: { authorization: `Bearer ${API_TOKEN}` } });
    const view = (await lookup.json()) as { payment: { account: string | null }; events: { payment: { account: string | null } }[] };
    assert.equal(view.payment.account, 'acct_1Connected');
    assert.deepEqual(
      view.events.map((e) => e.payment.account),
      ['acct_1Connected', 'acct_1Connected'],
    );
  });

  test("filters the feed: ?account= gives that account's events only, in the feed's order", async () => {
    const auth = { authorization: `Bearer ${API_TOKEN}` };
    const page = (await (await fetch(`${service.baseUrl}/api/v1/payment-events?account=acct_1Connected`, { headers: auth })).json()) as FeedPage;
    assert.deepEqual(
      page.events.map((e) => [e.payment.charge_id, e.sequence]),
      [
        ['ch_acct_1', 1],
        ['ch_acct_1', 2],
      ],
    );
    const next = (await (
      await fetch(`${service.baseUrl}/api/v1/payment-events?account=acct_1Connected&after=${encodeURIComponent(page.next_cursor)}`, { headers: auth })
    ).json()) as FeedPage;
    assert.deepEqual(next.events, []);
    const none = (await (await fetch(`${service.baseUrl}/api/v1/payment-events?account=acct_1Nobody`, { headers: auth })).json()) as FeedPage;
    assert.deepEqual(none.events, []);
    const empty = await fetch(`${service.baseUrl}/api/v1/payment-events?account=`, { headers: auth });
    assert.equal(empty.status, 400);
    assert.equal(((await empty.json()) as { error: { code: string } }).error.code, 'account_invalid');
  });
});
