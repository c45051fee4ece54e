/**
 * The operator's event list and payment page, in-process (`app.request()` on the dashboard's own
 * routes, a real database): every filter, keyset pages that hold still while events arrive, bad
 * filter values answered 400 in one line (never a 500), a payment in words with one time format,
 * and the destinations always on the overview.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Hono } from 'hono';
import { createAdminAccess } from '../../src/dashboard/admin-access.ts';
import { type DashboardDeps, createDashboardRoutes } from '../../src/dashboard/dashboard-routes.ts';
import type { DashboardEnv } from '../../src/dashboard/dashboard-env.ts';
import { createAllowedHosts } from '../../src/web/allowed-hosts.ts';
import { postgresExecutor } from '../../src/db/client.ts';
import type { Finding } from '../../src/reconciliation/finding.ts';
import { upsertFindings } from '../../src/reconciliation/sql/findings.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';

const database = useTestDatabase();
let routes: Hono<DashboardEnv>;
const DAY_MS = 86_400_000;
const start = Date.UTC(2026, 10, 20, 12, 0, 0);

/** 150 events, one a minute from `start`: stripe and asaas in turn, every tenth failed, every 25th ignored as rejected_amount. */
async function storeEvents(): Promise<void> {
  await database.sql`
    insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status, decision, attempts)
    select case when g % 2 = 0 then 'stripe' else 'asaas' end, 'evt_list_' || g,
           case when g % 3 = 0 then 'charge.refunded' else 'charge.succeeded' end, 'ch_list_' || (g / 5), '{}', '\\x7b7d',
           ${new Date(start)}::timestamptz + g * interval '1 minute', ${new Date(start)}::timestamptz + g * interval '1 minute',
           case when g % 10 = 0 then 'failed' when g % 25 = 1 then 'ignored' else 'processed' end,
           case when g % 10 = 0 then null when g % 25 = 1 then 'rejected_amount' else 'applied' end,
           case when g % 10 = 0 then 3 else 1 end
    from generate_series(1, 150) g`;
}

setup(async () => {
  await storeEvents();
  const handle = database.connect('event-list-test');
  const deps: DashboardDeps = {
    db: handle.db,
    boss: undefined as never,
    providers: () => ['stripe', 'asaas', 'pagarme'],
    destinations: () => ['orders', 'ledger'],
    predictReplay: () => Promise.reject(new Error('not in this test')),
    access: createAdminAccess(undefined),
    allowedHosts: createAllowedHosts(),
    publishedOverHttps: false,
    clock: () => new Date(start + DAY_MS),
  };
  routes = createDashboardRoutes(deps);
});

async function page(query: string): Promise<{ status: number; text: string; eventIds: string[]; older: string | undefined }> {
  const response = await routes.request(`/dashboard/events${query}`);
  const text = await response.text();
  const eventIds = [...text.matchAll(/<tr data-event-id="([^"]+)">/g)].map((m) => m[1]!);
  const older = /<a href="([^"]+)" rel="next"/.exec(text)?.[1]?.replaceAll('&amp;', '&');
  return { status: response.status, text, eventIds, older };
}

const numbersOf = (ids: string[]) => ids.map((id) => Number(id.slice('evt_list_'.length)));

describe('GET /dashboard/events: filters', () => {
  test('no filter: the newest 50, newest first, and a link to older ones', async () => {
    const first = await page('');
    assert.equal(first.status, 200);
    assert.deepEqual(
      numbersOf(first.eventIds),
      Array.from({ length: 50 }, (_, i) => 150 - i),
    );
    assert.ok(first.older);
  });

  test('each filter narrows to exactly its events', async () => {
    const cases: Array<[string, (g: number) => boolean]> = [
      ['?provider=stripe', (g) => g % 2 === 0],
      ['?status=failed', (g) => g % 10 === 0],
      ['?decision=rejected_amount', (g) => g % 25 === 1 && g % 10 !== 0],
      ['?type=charge.refunded', (g) => g % 3 === 0],
      ['?provider=asaas&status=ignored&decision=rejected_amount', (g) => g % 2 === 1 && g % 25 === 1],
      ['?event=evt_list_42', (g) => g === 42],
      ['?charge=ch_list_7', (g) => Math.floor(g / 5) === 7],
      ['?from=2026-11-20T13:00&to=2026-11-20 13:10', (g) => g >= 60 && g < 70],
      ['?from=2026-11-20T13:00:00Z&status=failed&type=charge.refunded', (g) => g >= 60 && g % 10 === 0 && g % 3 === 0],
    ];
    for (const [query, matches] of cases) {
      const expected = Array.from({ length: 150 }, (_, i) => 150 - i)
        .filter(matches)
        .slice(0, 50);
      const found = await page(query);
      assert.equal(found.status, 200, query);
      assert.deepEqual(numbersOf(found.eventIds), expected, query);
    }
  });

  test('blank fields, as a submitted form sends them, are no filter; the values asked are shown back in the form', async () => {
    const found = await page('?provider=&status=failed&decision=&type=&event=&charge=&from=&to=');
    assert.deepEqual(numbersOf(found.eventIds), [150, 140, 130, 120, 110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10]);
    assert.match(found.text, /<option value="failed" selected>failed<\/option>/);
  });

  test('nothing matches: says so', async () => {
    const found = await page('?provider=pagarme');
    assert.equal(found.status, 200);
    assert.match(found.text, /No event matches/);
  });
});

describe('GET /dashboard/events: keyset pages', () => {
  test('older → walks every match once, in order, and the last page has no older link', async () => {
    const seen: number[] = [];
    let query = '?provider=stripe';
    for (let pages = 0; pages < 5 && query; pages++) {
      const found = await page(query);
      seen.push(...numbersOf(found.eventIds));
      query = found.older?.replace('/dashboard/events', '') ?? '';
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 75 }, (_, i) => 150 - 2 * i),
    );
    assert.equal(query, '', 'the last page has no older link');
  });

  test('events stored while an operator pages do not shift the next page', async () => {
    const first = await page('');
    const secondBefore = await page(first.older!.replace('/dashboard/events', ''));
    await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at, status)
      select 'stripe', 'evt_late_' || g, 'charge.succeeded', 'ch_late', '{}', '\\x7b7d', now(), now(), 'pending' from generate_series(1, 30) g`;
    try {
      const secondAfter = await page(first.older!.replace('/dashboard/events', ''));
      assert.deepEqual(secondAfter.eventIds, secondBefore.eventIds);
      assert.equal((await page('')).eventIds[0], 'evt_late_30', 'the newest page shows them first');
    } finally {
      await database.sql`delete from webhook_inbox where event_id like 'evt_late_%'`;
    }
  });
});

describe('GET /dashboard/events: bad filter values', () => {
  test('each is a 400 with one line naming the field and what it takes; nothing is searched', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?status=done', /status must be one of pending, processed, ignored, failed/],
      ['?decision=rejected', /decision must be one of applied, stale, rejected_transition, rejected_amount/],
      ['?provider=Stripe', /provider is not a provider name/],
      ['?from=yesterday', /from is not a time: write YYYY-MM-DD HH:MM \(UTC\)/],
      ['?to=2026-13-45T99:99', /to is not a time/],
      ['?from=2026-11-21T00:00&to=2026-11-20T00:00', /from must be before to/],
      ['?before=-5', /before is not a position in the list/],
      ['?before=99999999999999999999', /before is not a position in the list/],
      [`?type=${'x'.repeat(81)}`, /type is longer than an event type can be \(80\)/],
      ['?status=done&from=yesterday', /status must be one of .*; from is not a time/],
    ];
    for (const [query, message] of cases) {
      const found = await page(query);
      assert.equal(found.status, 400, query);
      const notices = [...found.text.matchAll(/id="filter-problem">([^<]*)</g)].map((m) => m[1]);
      assert.equal(notices.length, 1, query);
      assert.match(notices[0]!, /^Bad filter: /);
      assert.match(notices[0]!, message, query);
      assert.deepEqual(found.eventIds, [], `${query}: no results shown`);
    }
  });

  test('a value carrying markup comes back escaped in the form, never as markup', async () => {
    const found = await page(`?event=${encodeURIComponent('"><script>alert(1)</script>')}`);
    assert.equal(found.status, 200);
    assert.ok(!found.text.includes('<script>alert(1)'), 'not echoed as markup');
    assert.match(found.text, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });
});

/**
 * A refunded Stripe payment as processing leaves it: three events with their facts (the last a
 * refund refused as impossible), two status changes, three payment events; destination `orders`
 * took all three, `ledger` took the first and parked on the second.
 */
async function storeRefundedPayment(): Promise<void> {
  const at = (minutes: number) => new Date(start + minutes * 60_000);
  const facts = [
    [
      'evt_pay_1',
      'charge.succeeded',
      'processed',
      'applied',
      { chargeId: 'ch_pay_1', status: 'paid', occurredAt: at(1).toISOString(), amount: 4990, amountRefunded: 0, currency: 'BRL' },
    ],
    [
      'evt_pay_2',
      'charge.refunded',
      'processed',
      'applied',
      { chargeId: 'ch_pay_1', status: 'refunded', occurredAt: at(2).toISOString(), amount: 4990, amountRefunded: 4990, currency: 'BRL' },
    ],
    [
      'evt_pay_3',
      'charge.refunded',
      'ignored',
      'rejected_amount',
      { chargeId: 'ch_pay_1', status: 'refunded', occurredAt: at(3).toISOString(), amount: 4990, amountRefunded: 9980, currency: 'BRL' },
    ],
  ] as const;
  const ids: number[] = [];
  for (const [index, [eventId, type, status, decision, fact]] of facts.entries()) {
    const detail =
      decision === 'rejected_amount'
        ? { status: 'refunded', amount: 4990, amountRefunded: 9980, occurredAt: fact.occurredAt }
        : { from: index === 0 ? null : 'paid', to: fact.status };
    // Stored pending, then settled by an UPDATE, as processing does: that is what records its payment fact (payment_facts).
    const [row] = await database.sql`
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, occurred_at, received_at)
      values ('stripe', ${eventId}, ${type}, 'ch_pay_1', '{}', '\\x7b7d', ${at(index + 1)}, ${at(index + 1)})
      returning id`;
    await database.sql`
      update webhook_inbox set status = ${status}, processed_at = ${at(index + 1)}, decision = ${decision}, decision_detail = ${database.sql.json(detail)}, fact = ${database.sql.json(fact)}
      where id = ${row!.id}`;
    ids.push(Number(row!.id));
  }
  const [payment] = await database.sql`
    insert into payments (provider, gateway_charge_id, status, amount, amount_refunded, currency, last_gateway_event_at, event_sequence, created_at, updated_at)
    values ('stripe', 'ch_pay_1', 'refunded', 4990, 4990, 'BRL', ${at(2)}, 3, ${at(1)}, ${at(2)}) returning id`;
  const paymentId = Number(payment!.id);
  await database.sql`insert into payment_transitions (payment_id, inbox_id, from_status, to_status, created_at) values (${paymentId}, ${ids[0]!}, null, 'paid', ${at(1)}), (${paymentId}, ${ids[1]!}, 'paid', 'refunded', ${at(2)})`;
  const events: Array<[number, string, string | null, number]> = [
    [1, 'paid', null, 0],
    [2, 'refunded', 'paid', 2000],
    [3, 'refunded', 'refunded', 4990],
  ];
  for (const [sequence, status, previous, refunded] of events) {
    await database.sql`
      insert into payment_events (payment_id, sequence, provider, gateway_charge_id, status, previous_status, amount, amount_refunded, currency, occurred_at, cause_inbox_id, cause_event_id, cause_event_type, created_at)
      values (${paymentId}, ${sequence}, 'stripe', 'ch_pay_1', ${status}, ${previous}, 4990, ${refunded}, 'BRL', ${at(sequence)}, ${ids[Math.min(sequence, 2) - 1]!}, 'evt_pay_x', 'charge.refunded', ${at(sequence)})`;
  }
  await database.sql`
    insert into delivery_lanes (destination, payment_id, delivered_sequence, attempts, parked_at, parked_reason, last_attempt_at, last_status, last_error)
    values ('orders', ${paymentId}, 3, 0, null, null, ${at(3)}, 204, null),
           ('ledger', ${paymentId}, 1, 8, ${at(30)}, 'HTTP 500: ledger says no', ${at(30)}, 500, 'HTTP 500: ledger says no')`;
}

describe('GET /dashboard/payments/:provider/:chargeId', () => {
  setup(storeRefundedPayment);

  test('the payment in words, its facts, its status history, and each payment event per destination', async () => {
    const response = await routes.request('/dashboard/payments/stripe/ch_pay_1');
    assert.equal(response.status, 200);
    const text = await response.text();
    assert.match(text, /<p class="sentence">refunded, R\$49\.90, R\$49\.90 refunded<\/p>/);
    assert.match(text, /<dt>amount<\/dt><dd data-field="amount">R\$49\.90<\/dd>/);
    assert.doesNotMatch(text, /gateway_charge_id|amount_refunded|event_sequence|last_gateway_event_at/, 'no raw column names');
    // The facts: what each event said, and the refused refund in words.
    assert.match(text, /<tr data-event-id="evt_pay_1">[\s\S]*?paid, R\$49\.90, nothing refunded/);
    assert.match(
      text,
      /<tr data-event-id="evt_pay_3">[\s\S]*?rejected_amount: says refunded with 9980 refunded of an amount of 4990[^<]*check the charge at the gateway/,
    );
    assert.match(text, /\(created\) → <b>paid<\/b>[\s\S]*?paid → <b>refunded<\/b>/);
    // Each payment event, per destination.
    const cell = (sequence: number, destination: string) =>
      new RegExp(`<tr data-sequence="${sequence}">[\\s\\S]*?data-destination="${destination}" data-delivery="([a-z]+)">([^<]*)<`).exec(text)?.slice(1);
    assert.deepEqual(cell(1, 'orders')?.[0], 'delivered');
    assert.deepEqual(cell(3, 'orders')?.[0], 'delivered');
    assert.deepEqual(cell(1, 'ledger')?.[0], 'delivered');
    assert.deepEqual(cell(2, 'ledger'), ['parked', 'PARKED since 2026-11-20 12:30:00 UTC: HTTP 500: ledger says no']);
    assert.deepEqual(cell(3, 'ledger'), ['waiting', 'waits for #2']);
  });

  test('every time on the page is in one format (UTC, to the second)', async () => {
    const text = await (await routes.request('/dashboard/payments/stripe/ch_pay_1')).text();
    assert.doesNotMatch(text, /\d{4}-\d\d-\d\dT\d\d:\d\d/, 'no ISO T-times');
    const times = text.match(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?[^<"]{0,5}/g) ?? [];
    assert.ok(times.length >= 10, `times shown: ${times.length}`);
    for (const time of times) assert.match(time, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
  });

  test("the event page's payment box is the same summary, linking to the payment page", async () => {
    const [row] = await database.sql`select id from webhook_inbox where event_id = 'evt_pay_2'`;
    const text = await (await routes.request(`/dashboard/events/${row!.id}`)).text();
    assert.match(text, /<dt>refunded<\/dt><dd data-field="refunded">R\$49\.90<\/dd>/);
    assert.match(text, /href="\/dashboard\/payments\/stripe\/ch_pay_1">payment page →/);
    assert.doesNotMatch(text, /<dt>amount_refunded<\/dt>/);
  });

  test("the payment's open reconciliation findings are on its page, each explained", async () => {
    const at = (minutes: number) => new Date(start + minutes * 60_000);
    const [payment] = await database.sql<{ id: number }[]>`select id::int as id from payments where gateway_charge_id = 'ch_pay_1'`;
    const [run] = await database.sql<{ id: number }[]>`
      insert into reconciliation_runs (provider, scope, since, until, status, started_at) values ('stripe', 'window', ${at(0)}, ${at(60)}, 'complete', ${at(60)}) returning id::int as id`;
    const finding: Finding = {
      kind: 'refund_not_in_ledger',
      subject: 'ch_pay_1',
      paymentId: payment!.id,
      evidence: {
        kind: 'refund_not_in_ledger',
        payment: {
          paymentId: payment!.id,
          key: 'ch_pay_1',
          status: 'refunded',
          amount: 4990,
          amountRefunded: 4990,
          currency: 'BRL',
          createdAt: at(0).toISOString(),
        },
        ledgerRefunded: 0,
        entries: [],
      },
    };
    await upsertFindings(postgresExecutor(database.sql), 'stripe', run!.id, [finding], at(60));
    const text = await (await routes.request('/dashboard/payments/stripe/ch_pay_1')).text();
    assert.match(text, /<a href="\/dashboard\/findings">Reconciliation<\/a>: 1 open finding\(s\)/);
    assert.match(text, /<li data-kind="refund_not_in_ledger">refund_not_in_ledger: [^<]*the ledger shows 0[^<]*did the refund fail at the gateway\?<\/li>/);
    await database.sql`update reconciliation_findings set status = 'resolved', resolved_at = now()`;
    assert.doesNotMatch(await (await routes.request('/dashboard/payments/stripe/ch_pay_1')).text(), /payment-findings/, 'a resolved finding is not shown');
  });

  test('an unknown payment is a 404 in words; an odd charge id is just unknown', async () => {
    for (const path of ['/dashboard/payments/stripe/ch_nope', `/dashboard/payments/stripe/${encodeURIComponent('<b>x</b>')}`]) {
      const response = await routes.request(path);
      assert.equal(response.status, 404, path);
      assert.match(await response.text(), /No such payment/);
    }
  });
});

describe('GET /dashboard: destinations', () => {
  test('every configured destination is listed with its state, how far behind it is, and its parked lanes', async () => {
    const text = await (await routes.request('/dashboard')).text();
    const row = (name: string) => new RegExp(`<tr data-destination="${name}">([\\s\\S]*?)</tr>`).exec(text)?.[1] ?? '';
    assert.match(row('orders'), /data-state="ok"/);
    assert.match(row('orders'), /data-figure="parked-lanes">0</);
    assert.match(row('orders'), /data-figure="destination-lag"[^>]*>caught up</);
    assert.match(row('ledger'), /data-figure="parked-lanes">1 /);
    assert.match(row('ledger'), /data-figure="behind-lanes">1</);
    // Its oldest undelivered event (#2) was written at 12:02; the dashboard's clock says a day later.
    assert.match(row('ledger'), /data-figure="destination-lag"[^>]*>23h58m/);
  });
});
