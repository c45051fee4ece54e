import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { recordSignedOutSession } from '../../src/dashboard/sql/signed-out-sessions.ts';
import { useService, startTestService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';

const SECRET = 'whsec_dashboard_test_secret';
const ADMIN_TOKEN = 'dashboard-admin-token-0123456789';
const database = useTestDatabase();
let sequence = 0;

/** A real signed delivery, then its row set to `failed` as if retries had run out. */
async function failedEvent(extra: Record<string, unknown> = {}): Promise<{ id: number; eventId: string }> {
  sequence += 1;
  const eventId = `evt_dash_${sequence}`;
  const body = JSON.parse(chargeEvent({ id: eventId, type: 'charge.succeeded', chargeId: `ch_dash_${sequence}`, created: Math.floor(Date.now() / 1000) }));
  Object.assign(body.data.object, extra);
  // "__BIG__" becomes a number JavaScript cannot hold exactly.
  const raw = JSON.stringify(body).replace('"__BIG__"', '12345678901234567890');
  assert.equal((await postStripe(service.baseUrl, raw, SECRET)).status, 200);
  const [row] = await database.sql`
    update webhook_inbox set status = 'failed', attempts = 3, last_error = 'HandlerError: boom <b>' where event_id = ${eventId} returning id`;
  return { id: Number(row!.id), eventId };
}

async function statusOf(id: number): Promise<string> {
  const [row] = await database.sql`select status from webhook_inbox where id = ${id}`;
  return row!.status;
}

function post(path: string, form: Record<string, string>, headers: Record<string, string> = {}, baseUrl = service.baseUrl) {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl, ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

/** Signs in like a browser: the session cookie, and the CSRF token from a rendered form. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const response = await post('/dashboard/session', { token: ADMIN_TOKEN });
  assert.equal(response.status, 303);
  const setCookie = response.headers.get('set-cookie') ?? '';
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  const cookie = setCookie.split(';')[0]!;
  const page = await (await fetch(`${service.baseUrl}/dashboard`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf, 'a signed-in page carries a CSRF token');
  return { cookie, csrf };
}

// Receiver only: a replayed event stays pending with its job, so the test can see both.
const service = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ADMIN_TOKEN: ADMIN_TOKEN } });

describe('GET /dashboard', () => {
  test('renders per-provider figures, SVG charts and the failed list from the database', async () => {
    const { eventId } = await failedEvent();
    const response = await fetch(`${service.baseUrl}/dashboard`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const page = await response.text();
    assert.match(page, /<section class="card" data-provider="stripe">/);
    assert.equal((page.match(/<svg class="chart"/g) ?? []).length, 2, 'a last-hour and a last-day chart');
    assert.match(page, /<rect class="s-failed"/);
    assert.ok(page.includes(eventId));
    assert.ok(page.includes('HandlerError: boom &lt;b&gt;'), 'last_error is escaped');
    assert.ok(!page.includes('name="csrf"'), 'signed out: no action forms');
  });

  test('the event page shows the payload pretty-printed and HTML-escaped', async () => {
    const { id } = await failedEvent({ description: '</pre><script>alert("x")</script>', gateway_reference: '__BIG__' });
    const page = await (await fetch(`${service.baseUrl}/dashboard/events/${id}`)).text();
    assert.ok(!page.includes('<script>'), 'no markup from the payload reaches the page');
    assert.ok(page.includes('&lt;/pre&gt;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;'));
    assert.match(page, /&quot;gateway_reference&quot;: 12345678901234567890\n/, 'a 64-bit number keeps its digits');
    assert.match(
      page,
      /<pre id="payload">\{\n {2}&quot;id&quot;: &quot;evt_dash_\d+&quot;,\n {2}&quot;object&quot;: &quot;event&quot;,\n/,
      'pretty-printed, in the order the gateway sent',
    );
  });

  test('the event page shows how the delivery was verified, never the secret', async () => {
    const { id } = await failedEvent();
    const page = await (await fetch(`${service.baseUrl}/dashboard/events/${id}`)).text();
    assert.match(
      page,
      /<dd id="verification">stripe-v1: secret #1 \(fingerprint [0-9a-f]{12}\), signed \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, verified \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/dd>/,
      'in the page’s one time format',
    );
    assert.ok(!page.includes(SECRET), 'the secret is not on the page');
  });

  test('an unknown event id gets a 404 page', async () => {
    assert.equal((await fetch(`${service.baseUrl}/dashboard/events/999999999`)).status, 404);
  });

  test('a replay notice shows its count only when the link carries a non-negative whole number', async () => {
    const noticeOf = async (query: string) => {
      const page = await (await fetch(`${service.baseUrl}/dashboard?notice=replayed${query}`)).text();
      return /<div class="notice[^"]*" role="status">([^<]*)<\/div>/.exec(page)?.[1];
    };
    assert.equal(await noticeOf('&count=3'), '3 event(s) put back to pending and queued.');
    assert.equal(await noticeOf('&count=0'), '0 event(s) put back to pending and queued.');
    for (const crafted of ['&count=-5', '&count=1.5', '&count=1e3', '&count=0x10', '&count=', '&count=abc', '&count=99999999999999999999', '']) {
      const text = await noticeOf(crafted);
      assert.ok(text !== undefined, `a notice for ${JSON.stringify(crafted)}`);
      assert.doesNotMatch(text, /\d/, `no number taken from ${JSON.stringify(crafted)}: ${text}`);
    }
  });
});

describe('dashboard actions', () => {
  test('without a session nothing changes: 403 and the row stays failed', async () => {
    const { id } = await failedEvent();
    assert.equal((await post(`/dashboard/events/${id}/replay`, {})).status, 403);
    assert.equal((await post(`/dashboard/events/${id}/replay`, {}, { cookie: 'inbox_admin=1.2.forged' })).status, 403);
    assert.equal((await post('/dashboard/replay', { provider: 'stripe', status: 'failed', confirm: 'yes' })).status, 403);
    assert.equal(await statusOf(id), 'failed');
  });

  test('a wrong token gets no session', async () => {
    const response = await post('/dashboard/session', { token: 'not-the-admin-token-at-all' });
    assert.equal(response.status, 403);
    assert.equal(response.headers.get('set-cookie'), null);
  });

  test('a form past the 16 KB limit gets a 413 page, not a 500', async () => {
    const response = await post('/dashboard/session', { token: 'x'.repeat(20_000) });
    assert.equal(response.status, 413);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await response.text(), /Form too large/);
  });

  test('a form body that cannot be parsed gets a 400 page, not a 500', async () => {
    // multipart/form-data without a boundary: undici's FormData parser throws a TypeError.
    const response = await fetch(`${service.baseUrl}/dashboard/session`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'multipart/form-data', origin: service.baseUrl },
      body: 'token=whatever',
    });
    assert.equal(response.status, 400);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await response.text(), /Unreadable form/);
  });

  test('a session without the CSRF token, or from another origin, changes nothing', async () => {
    const { id } = await failedEvent();
    const { cookie, csrf } = await signIn();
    assert.equal((await post(`/dashboard/events/${id}/replay`, {}, { cookie })).status, 403);
    assert.equal((await post(`/dashboard/events/${id}/replay`, { csrf: `${csrf}x` }, { cookie })).status, 403);
    assert.equal((await post(`/dashboard/events/${id}/replay`, { csrf }, { cookie, origin: 'https://evil.example' })).status, 403);
    assert.equal(await statusOf(id), 'failed');
  });

  test('signing out ends that session on every instance, a copy of its cookie too; another session stays signed in', async () => {
    const { id } = await failedEvent();
    const copied = await signIn();
    const another = await signIn();
    const signOut = await post('/dashboard/session/end', { csrf: copied.csrf }, { cookie: copied.cookie });
    assert.equal(signOut.status, 303);
    assert.match(signOut.headers.get('set-cookie') ?? '', /^inbox_admin=;/, 'the browser drops its cookie');
    // A second container on the same database: sessions are checked without instance state.
    const second = await startTestService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ADMIN_TOKEN: ADMIN_TOKEN } });
    try {
      for (const instance of [service, second]) {
        const page = await (await fetch(`${instance.baseUrl}/dashboard`, { headers: { cookie: copied.cookie } })).text();
        assert.doesNotMatch(page, /Sign out/, `${instance.baseUrl}: the copied cookie is signed out`);
        assert.equal((await post(`/dashboard/events/${id}/replay`, { csrf: copied.csrf }, { cookie: copied.cookie }, instance.baseUrl)).status, 403);
        assert.match(await (await fetch(`${instance.baseUrl}/dashboard`, { headers: { cookie: another.cookie } })).text(), /Sign out/);
      }
    } finally {
      await second.stop();
    }
    assert.equal(await statusOf(id), 'failed');
  });

  test('replaying one event puts it back to pending with a job', async () => {
    const { id } = await failedEvent();
    const { cookie, csrf } = await signIn();
    const response = await post(`/dashboard/events/${id}/replay`, { csrf }, { cookie });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), `/dashboard/events/${id}?notice=replayed&count=1`);
    assert.equal(await statusOf(id), 'pending');
    const [job] = await database.sql`select count(*)::int as n from pgboss.job where name = 'webhooks' and (data->>'inboxId')::bigint = ${id}`;
    assert.equal(job!.n, 2, 'the delivery job and the replay job');
  });

  test('a filtered replay previews (dry run) before it changes anything', async () => {
    const { id, eventId: eventIdOf } = await failedEvent();
    const { cookie, csrf } = await signIn();
    const [{ n: failedBefore }] = (await database.sql`select count(*)::int as n from webhook_inbox where status = 'failed'`) as unknown as [{ n: number }];
    const preview = await post('/dashboard/replay', { csrf, provider: 'stripe', status: 'failed', since: '', until: '' }, { cookie });
    assert.equal(preview.status, 200);
    const page = await preview.text();
    assert.match(page, new RegExp(`<b>${failedBefore}</b> events? match`));
    assert.equal(await statusOf(id), 'failed', 'the preview changed nothing');
    // The workers' handlers ran on them in a rolled-back transaction: this charge would become paid.
    const chargeId = (await database.sql`select resource_id from webhook_inbox where id = ${id}`)[0]!.resource_id as string;
    assert.match(page, new RegExp(`<td><code>stripe:${chargeId}</code></td><td>\\(none\\)</td><td>paid</td>`));
    assert.match(page, new RegExp(`<b>${failedBefore}</b> of ${failedBefore} payments? would change status`));
    assert.match(
      page,
      new RegExp(`<td><code>${eventIdOf}</code></td><td>charge.succeeded</td><td>failed</td><td>processed</td><td>applied: created the payment as paid</td>`),
    );
    assert.equal((await database.sql`select count(*)::int as n from payments`)[0]!.n, 0, 'no payment row left behind');
    const confirmed = await post('/dashboard/replay', { csrf, provider: 'stripe', status: 'failed', since: '', until: '', confirm: 'yes' }, { cookie });
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.headers.get('location'), `/dashboard?notice=replayed&count=${failedBefore}`);
    assert.equal(await statusOf(id), 'pending');
  });
});

describe('signed-out sessions', () => {
  test('a record is kept only until its session would have expired: the next sign-out deletes it', async () => {
    const { db } = database.connect('signed-out-sessions');
    const t0 = new Date('2026-03-01T10:00:00Z');
    const hours = (n: number) => new Date(t0.getTime() + n * 3_600_000);
    await recordSignedOutSession(db, 'nonce-expiring-first', hours(1), t0);
    await recordSignedOutSession(db, 'nonce-expiring-later', hours(8), t0);
    await recordSignedOutSession(db, 'nonce-signed-out-later', hours(9), hours(2));
    const left = await database.sql`select nonce from dashboard_signed_out_sessions where nonce like 'nonce-%' order by nonce`;
    assert.deepEqual(
      left.map((r) => r.nonce),
      ['nonce-expiring-later', 'nonce-signed-out-later'],
    );
  });
});

describe('access configuration', () => {
  test('without INBOX_ADMIN_TOKEN the dashboard is off unless INBOX_DASHBOARD=on, and then read-only', async () => {
    const off = await startTestService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET } });
    try {
      assert.equal((await fetch(`${off.baseUrl}/dashboard`)).status, 404);
    } finally {
      await off.stop();
    }
    const readOnly = await startTestService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, INBOX_DASHBOARD: 'on' } });
    try {
      const page = await (await fetch(`${readOnly.baseUrl}/dashboard`)).text();
      assert.match(page, /INBOX_ADMIN_TOKEN is not set/);
      const response = await fetch(`${readOnly.baseUrl}/dashboard/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: readOnly.baseUrl },
        body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
        redirect: 'manual',
      });
      assert.equal(response.status, 403);
    } finally {
      await readOnly.stop();
    }
  });
});
