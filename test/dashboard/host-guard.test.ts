/**
 * DNS rebinding: a page on attacker.example, re-resolved to this service's address, is
 * same-origin with it in the operator's browser and could read payloads. The browser still sends
 * `Host: attacker.example`, so the dashboard answers only to its own names (421 otherwise), while
 * gateways and scrapers keep reaching webhooks, metrics and health checks by any name.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { requestWithHost } from '../support/host-request.ts';
import { useService, startTestService, type TestService } from '../support/service.ts';
import { chargeEvent, stripeSignature } from '../support/stripe.ts';

const SECRET = 'whsec_host_guard_test_secret';
const ADMIN_TOKEN = 'host-guard-admin-token-0123456789';
const FORGED = 'attacker.example';
const database = useTestDatabase();
let sequence = 0;

const env = (extra: Record<string, string> = {}) => ({ INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ADMIN_TOKEN: ADMIN_TOKEN, ...extra });
const hostOf = (s: TestService) => new URL(s.baseUrl).host;
const get = (s: TestService, path: string, host: string) => requestWithHost(`${s.baseUrl}${path}`, { host });
const post = (s: TestService, path: string, host: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  requestWithHost(`${s.baseUrl}${path}`, { method: 'POST', host, form, headers: { origin: `http://${host}`, ...headers } });

/** A signed Stripe delivery under the given Host, then its row set to `failed` (replayable). */
async function storedEvent(host = hostOf(service)): Promise<{ id: number; eventId: string; status: number }> {
  sequence += 1;
  const eventId = `evt_host_guard_${sequence}`;
  const body = chargeEvent({ id: eventId, type: 'charge.succeeded', chargeId: `ch_host_guard_${sequence}`, created: Math.floor(Date.now() / 1000) });
  const response = await requestWithHost(`${service.baseUrl}/webhooks/stripe`, {
    method: 'POST',
    host,
    headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, SECRET) },
    body,
  });
  const [row] = await database.sql`update webhook_inbox set status = 'failed' where event_id = ${eventId} returning id`;
  return { id: Number(row?.id), eventId, status: response.status };
}

async function signIn(
  s: TestService,
  host: string,
  origin = `http://${host}`,
): Promise<{ status: number; cookie: string | undefined; setCookie: string | undefined }> {
  const response = await post(s, '/dashboard/session', host, { token: ADMIN_TOKEN }, { origin });
  const setCookie = response.headers['set-cookie']?.[0];
  return { status: response.status, cookie: setCookie?.split(';')[0], setCookie };
}

async function withService<T>(extra: Record<string, string>, use: (s: TestService) => Promise<T>): Promise<T> {
  const other = await startTestService({ database, env: env(extra) });
  try {
    return await use(other);
  } finally {
    await other.stop();
  }
}

const service = useService(() => ({ database, env: env() }));

describe('a request naming another host', () => {
  test('gets 421 on every dashboard page and action, and no payload', async () => {
    const { id, eventId } = await storedEvent();
    for (const path of ['/dashboard', `/dashboard/events/${id}`, '/dashboard/events/999999999', '/dashboard/assets/dashboard.css', '/dashboard/no-such-page']) {
      const response = await get(service, path, `${FORGED}:${service.port}`);
      assert.equal(response.status, 421, `GET ${path}`);
      assert.ok(!response.text.includes(eventId), `GET ${path} shows no event`);
      assert.match(response.text, /"code":"misdirected_request"/);
    }
    for (const path of ['/dashboard/session', '/dashboard/session/end', `/dashboard/events/${id}/replay`, '/dashboard/replay']) {
      assert.equal(
        (await post(service, path, FORGED, { token: ADMIN_TOKEN, provider: 'stripe', status: 'failed', confirm: 'yes' })).status,
        421,
        `POST ${path}`,
      );
    }
  });

  test('gets 421 under /api/v1 too, where the operator API is mounted', async () => {
    assert.equal((await get(service, '/api/v1/events', FORGED)).status, 421);
    assert.equal((await get(service, '/api/v1/events', hostOf(service))).status, 404, 'no such route yet');
  });

  test('cannot act even with a valid session and CSRF token', async () => {
    const { id } = await storedEvent();
    const { cookie } = await signIn(service, hostOf(service));
    assert.ok(cookie);
    const page = await requestWithHost(`${service.baseUrl}/dashboard`, { host: hostOf(service), headers: { cookie } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.text)?.[1];
    assert.ok(csrf);
    const replay = await post(service, `/dashboard/events/${id}/replay`, FORGED, { csrf }, { cookie });
    assert.equal(replay.status, 421);
    const [row] = await database.sql`select status from webhook_inbox where id = ${id}`;
    assert.equal(row?.status, 'failed');
  });

  test('still reaches webhooks, /metrics, /healthz and /readyz: gateways and scrapers use any name', async () => {
    const { status } = await storedEvent(`${FORGED}:${service.port}`);
    assert.equal(status, 200);
    for (const path of ['/metrics', '/healthz', '/readyz']) assert.equal((await get(service, path, FORGED)).status, 200, path);
  });
});

describe('the names the dashboard answers to', () => {
  test('by default, the loopback names on any port: 127.0.0.1, localhost and [::1]', async () => {
    for (const host of [`127.0.0.1:${service.port}`, `localhost:${service.port}`, 'LOCALHOST:8080', `[::1]:${service.port}`, '[::1]', 'localhost']) {
      assert.equal((await get(service, '/dashboard', host)).status, 200, host);
    }
    for (const host of ['127.0.0.2', 'localhost.attacker.example', `localhost.${FORGED}:${service.port}`]) {
      assert.equal((await get(service, '/dashboard', host)).status, 421, host);
    }
  });

  test('INBOX_PUBLIC_URL with a port: exactly that host and port', async () => {
    await withService({ INBOX_PUBLIC_URL: 'http://Inbox.Internal:8443/' }, async (proxied) => {
      assert.equal((await get(proxied, '/dashboard', 'inbox.internal:8443')).status, 200);
      assert.equal((await get(proxied, '/dashboard', 'inbox.internal:9999')).status, 421, 'another port');
      assert.equal((await get(proxied, '/dashboard', 'inbox.internal')).status, 421, 'no port');
      assert.equal((await get(proxied, '/dashboard', hostOf(proxied))).status, 200, 'loopback still answers');
      assert.equal((await signIn(proxied, 'inbox.internal:8443')).status, 303);
    });
  });

  test('INBOX_ALLOWED_HOSTS: a name alone on any port, name:port on that port only', async () => {
    await withService({ INBOX_ALLOWED_HOSTS: 'ops.example, inbox-1:3000' }, async (listed) => {
      for (const host of ['ops.example', 'ops.example:8080', 'inbox-1:3000']) assert.equal((await get(listed, '/dashboard', host)).status, 200, host);
      for (const host of ['inbox-1:3001', 'inbox-1', 'sub.ops.example', FORGED]) assert.equal((await get(listed, '/dashboard', host)).status, 421, host);
    });
  });
});

describe('the sign-in form’s Origin check uses the same names', () => {
  test('behind a proxy that rewrites Host, the Origin of INBOX_PUBLIC_URL signs in', async () => {
    await withService({ INBOX_PUBLIC_URL: 'https://ops.example.com' }, async (proxied) => {
      assert.equal((await signIn(proxied, hostOf(proxied), 'https://ops.example.com')).status, 303);
      assert.equal((await signIn(proxied, hostOf(proxied), 'http://ops.example.com')).status, 403, 'another scheme is another origin');
    });
  });

  test('X-Forwarded-Host does not vouch for a foreign Origin', async () => {
    const response = await post(
      service,
      '/dashboard/session',
      hostOf(service),
      { token: ADMIN_TOKEN },
      { origin: `http://${FORGED}`, 'x-forwarded-host': FORGED },
    );
    assert.equal(response.status, 403);
  });
});

describe('the session cookie behind a TLS-terminating proxy', () => {
  test('INBOX_PUBLIC_URL https://… makes it Secure though the request the service gets is plain http, with no X-Forwarded-Proto', async () => {
    await withService({ INBOX_PUBLIC_URL: 'https://ops.example.com' }, async (proxied) => {
      const { status, setCookie } = await signIn(proxied, 'ops.example.com', 'https://ops.example.com');
      assert.equal(status, 303);
      assert.match(setCookie ?? '', /;\s*Secure/i);
    });
    const plain = await signIn(service, hostOf(service));
    assert.equal(plain.status, 303);
    assert.doesNotMatch(plain.setCookie ?? '', /Secure/i, 'over plain http with no https public URL a Secure cookie would never be sent back');
  });
});
