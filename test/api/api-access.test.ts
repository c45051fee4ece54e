/**
 * /api/v1 over a real socket: the bearer token, the API off without one, the host guard, the
 * feed's limits and cursors, the payments lookup, the OpenAPI description, served by both roles.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { encodeFeedCursor } from '../../src/api/feed-cursor.ts';
import { ConfigError } from '../../src/errors.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { requestWithHost } from '../support/host-request.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { connectDatabase } from '../../src/db/client.ts';
import { API_TOKEN } from './feed-client.ts';
import { createPayments, writeChanges } from './outbox-writer.ts';

const database = useTestDatabase();
let service: TestService;
let off: TestService;

const auth = { authorization: `Bearer ${API_TOKEN}` };
const get = (s: TestService, path: string, headers: Record<string, string> = auth) => fetch(`${s.baseUrl}${path}`, { headers });
/** The test cluster's system identifier, read here rather than through the code under test. */
const thisCluster = async () => (await database.sql<{ id: string }[]>`select system_identifier::text as id from pg_control_system()`)[0]!.id;
const errorCode = async (response: Response) => ((await response.json()) as { error: { code: string } }).error.code;

setup(async () => {
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_API_TOKEN: API_TOKEN } });
  off = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'receiver' } });
  const body = chargeEvent({ id: 'evt_api_1', type: 'charge.succeeded', chargeId: 'ch_api_1', created: 1_760_000_000, amount: 1234 });
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
  await waitUntilSettled(database.sql, ['evt_api_1']);
  // 150 more events, so a page's default size shows.
  const writer = connectDatabase({ url: database.url, poolSize: 1, connectTimeoutSeconds: 5, applicationName: 'api-access-writer' });
  const payments = await createPayments(database.sql, 'ch_api_bulk', 150);
  await writer.db.transaction((tx) => writeChanges(tx, payments));
  await writer.close();
});

describe('the API token', () => {
  test('no Authorization header: 401 token_missing with WWW-Authenticate: Bearer', async () => {
    const response = await get(service, '/api/v1/payment-events', {});
    assert.equal(response.status, 401);
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
    assert.equal(await errorCode(response), 'token_missing');
  });

  test('a wrong token, a token one character short, another scheme: 401, and nothing of the candidate in the answer', async () => {
    for (const authorization of [`Bearer ${'x'.repeat(API_TOKEN.length)}`, `Bearer ${API_TOKEN.slice(0, -1)}`, `Basic ${API_TOKEN}`]) {
      const response = await get(service, '/api/v1/payments/stripe/ch_api_1', { authorization });
      const text = await response.text();
      assert.equal(response.status, 401, authorization);
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.ok(!text.includes(authorization.split(' ')[1]!), text);
    }
  });

  test('two Authorization headers, even both with the right token: 401 token_ambiguous, never accepted', async () => {
    const host = new URL(service.baseUrl).host;
    const wrong = `Bearer ${'x'.repeat(API_TOKEN.length)}`;
    for (const authorization of [
      [auth.authorization, auth.authorization],
      [auth.authorization, wrong],
      [wrong, auth.authorization],
      [`${auth.authorization}, ${wrong}`],
    ]) {
      const response = await requestWithHost(`${service.baseUrl}/api/v1/payment-events`, { host, headers: { authorization } });
      assert.equal(response.status, 401, authorization.join(' | '));
      assert.match(String(response.headers['www-authenticate']), /^Bearer .*error="invalid_request"/);
      const error = (JSON.parse(response.text) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'token_ambiguous');
      assert.ok(!response.text.includes(API_TOKEN), 'nothing of a candidate in the answer');
    }
  });

  test('the right token: 200', async () => {
    assert.equal((await get(service, '/api/v1/payment-events')).status, 200);
  });

  test('without INBOX_API_TOKEN the API is off: /api/v1/* is a 404, with or without a token', async () => {
    for (const path of ['/api/v1/payment-events', '/api/v1/payments/stripe/ch_api_1', '/api/v1/openapi.json']) {
      const response = await get(off, path);
      assert.equal(response.status, 404, path);
      assert.equal(await errorCode(response), 'not_found');
    }
  });

  test('a token under 32 characters is a configuration error that names INBOX_API_TOKEN', () => {
    assert.throws(
      () => testConfig({ INBOX_API_TOKEN: 'x'.repeat(31) }),
      (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.startsWith('INBOX_API_TOKEN:')),
    );
    assert.equal(testConfig({ INBOX_API_TOKEN: 'x'.repeat(32) }).api.token, 'x'.repeat(32));
  });

  test('a token with characters an Authorization: Bearer header cannot carry is a configuration error, not a token that never matches', () => {
    for (const token of ['Tr0ub4dor&3:correct-horse-battery-staple!', `${'x'.repeat(16)} ${'y'.repeat(16)}`, `${'é'.repeat(32)}`]) {
      assert.throws(
        () => testConfig({ INBOX_API_TOKEN: token }),
        (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.startsWith('INBOX_API_TOKEN:') && !p.includes(token)),
        token,
      );
    }
    // What RFC 6750 allows: letters, digits, - . _ ~ + /, then = padding (a base64 token, openssl rand -base64 32).
    const base64 = 'q7Xo+3Zt/0u9Lk-_.~a1B2c3D4e5F6g7H8i9J0kLmN==';
    assert.equal(testConfig({ INBOX_API_TOKEN: base64 }).api.token, base64);
  });

  test('the host guard covers /api/v1: another Host gets 421 before the token is looked at', async () => {
    const response = await requestWithHost(`${service.baseUrl}/api/v1/payment-events`, { host: 'attacker.example', headers: auth });
    assert.equal(response.status, 421);
    assert.equal((await requestWithHost(`${service.baseUrl}/api/v1/payment-events`, { host: new URL(service.baseUrl).host, headers: auth })).status, 200);
  });

  test('the worker role serves the API too', async () => {
    const worker = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'worker', INBOX_API_TOKEN: API_TOKEN } });
    try {
      const response = await get(worker, '/api/v1/payments/stripe/ch_api_1');
      assert.equal(response.status, 200);
    } finally {
      await worker.stop();
    }
  });
});

describe('the feed refuses what it cannot read', () => {
  for (const limit of ['0', '1001', '-1', '1.5', 'ten', '', '00000001000']) {
    test(`limit=${JSON.stringify(limit)}: 400 limit_invalid`, async () => {
      const response = await get(service, `/api/v1/payment-events?limit=${encodeURIComponent(limit)}`);
      assert.equal(response.status, 400);
      assert.equal(await errorCode(response), 'limit_invalid');
    });
  }

  test('limit 1 gives one event, 1000 all 151, none at all gives 100', async () => {
    const count = async (query: string) => ((await (await get(service, `/api/v1/payment-events${query}`)).json()) as { events: unknown[] }).events.length;
    // The feed shows only what every transaction on the server has settled (below the snapshot's
    // xmin); another test file's open transaction on the same server holds it back for a moment.
    await waitFor(async () => (await count('?limit=1000')) === 151, { message: 'the feed to show all 151 committed events' });
    assert.deepEqual([await count('?limit=1'), await count('?limit=1000'), await count('')], [1, 151, 100]);
  });

  const notCursors = {
    garbage: 'not a cursor!',
    'not base64 of a cursor': Buffer.from('hello').toString('base64url'),
    'an unknown version': Buffer.from('v3:1:1:1').toString('base64url'),
    'a v2 cursor without its cluster': Buffer.from('v2:1:1').toString('base64url'),
    'a txid beyond xid8': Buffer.from(`v1:${2n ** 64n}:1`).toString('base64url'),
    'a position beyond 2^53': Buffer.from('v1:1:9999999999999999').toString('base64url'),
    'leading zeros': Buffer.from('v1:01:1').toString('base64url'),
    'far too long': 'A'.repeat(200),
  };
  for (const [name, after] of Object.entries(notCursors)) {
    test(`after = ${name}: 400 cursor_invalid`, async () => {
      const response = await get(service, `/api/v1/payment-events?after=${encodeURIComponent(after)}`);
      assert.equal(response.status, 400);
      assert.equal(await errorCode(response), 'cursor_invalid');
    });
  }

  test('a page past the end is empty and hands back the same cursor', async () => {
    const first = (await (await get(service, '/api/v1/payment-events?limit=1000')).json()) as { next_cursor: string };
    const next = (await (await get(service, `/api/v1/payment-events?after=${first.next_cursor}`)).json()) as { events: unknown[]; next_cursor: string };
    assert.deepEqual(next, { events: [], next_cursor: first.next_cursor });
    // Of this cluster, yet past any transaction it has run: it cannot be told from a cursor of a
    // moment from now, so it is answered as one (empty until the feed gets there).
    const beyond = encodeFeedCursor({ txid: String(2n ** 63n), position: 1 }, await thisCluster());
    assert.deepEqual(await (await get(service, `/api/v1/payment-events?after=${beyond}`)).json(), { events: [], next_cursor: beyond });
  });

  test("a v1 cursor, issued before cursors named their cluster, is read as this cluster's and answered with a v2 one", async () => {
    const v1 = Buffer.from('v1:0:0').toString('base64url');
    const page = (await (await get(service, `/api/v1/payment-events?after=${v1}&limit=1000`)).json()) as { events: unknown[]; next_cursor: string };
    assert.equal(page.events.length, 151);
    assert.match(Buffer.from(page.next_cursor, 'base64url').toString('utf8'), new RegExp(`^v2:${await thisCluster()}:\\d+:\\d+$`));
  });
});

describe('GET /api/v1/payments/:provider/:chargeId', () => {
  test('a known payment: its state, its events in the contract shape, its transitions', async () => {
    const response = await get(service, '/api/v1/payments/stripe/ch_api_1');
    assert.equal(response.status, 200);
    const view = (await response.json()) as {
      payment: Record<string, unknown>;
      events: { sequence: number; type: string; payment: { status: string }; cause: { event_id: string } }[];
      transitions: { from_status: string | null; to_status: string }[];
    };
    assert.deepEqual(
      {
        provider: view.payment.provider,
        charge_id: view.payment.charge_id,
        status: view.payment.status,
        amount: view.payment.amount,
        event_sequence: view.payment.event_sequence,
      },
      { provider: 'stripe', charge_id: 'ch_api_1', status: 'paid', amount: 1234, event_sequence: 1 },
    );
    assert.deepEqual(
      view.events.map((e) => [e.sequence, e.type, e.cause.event_id]),
      [[1, 'payment.paid', 'evt_api_1']],
    );
    assert.deepEqual(
      view.transitions.map((t) => [t.from_status, t.to_status]),
      [[null, 'paid']],
    );
  });

  test('an unknown payment, or a known charge under another provider: 404 payment_not_found', async () => {
    for (const path of ['/api/v1/payments/stripe/ch_nobody', '/api/v1/payments/pagarme/ch_api_1']) {
      const response = await get(service, path);
      assert.equal(response.status, 404, path);
      assert.equal(await errorCode(response), 'payment_not_found');
    }
  });

  test('a NUL byte (%00) in the provider or the charge id: 404 payment_not_found, not a 500 from PostgreSQL', async () => {
    for (const path of ['/api/v1/payments/stripe/ch_api_1%00', '/api/v1/payments/stri%00pe/ch_api_1']) {
      const response = await get(service, path);
      assert.equal(response.status, 404, path);
      assert.equal(await errorCode(response), 'payment_not_found');
    }
  });
});

describe('a method a route does not serve', () => {
  test('POST, PUT, DELETE on the GET routes: 405 method_not_allowed with Allow: GET, HEAD; HEAD itself is answered', async () => {
    for (const path of ['/api/v1/payment-events', '/api/v1/payments/stripe/ch_api_1', '/api/v1/openapi.json']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const response = await fetch(`${service.baseUrl}${path}`, { method, headers: auth });
        assert.equal(response.status, 405, `${method} ${path}`);
        assert.equal(response.headers.get('allow'), 'GET, HEAD', `${method} ${path}`);
        assert.equal(await errorCode(response), 'method_not_allowed');
      }
      assert.equal((await fetch(`${service.baseUrl}${path}`, { method: 'HEAD', headers: auth })).status, 200, `HEAD ${path}`);
    }
  });

  test('without the token the answer is still 401: the 405 says nothing of a route to a caller who may not use it', async () => {
    const response = await fetch(`${service.baseUrl}/api/v1/payment-events`, { method: 'POST' });
    assert.equal(response.status, 401);
  });

  test('a path that does not exist stays 404 for every method', async () => {
    for (const method of ['GET', 'POST']) assert.equal((await fetch(`${service.baseUrl}/api/v1/no-such-route`, { method, headers: auth })).status, 404, method);
  });
});

describe('GET /api/v1/openapi.json', () => {
  test('OpenAPI 3.1 JSON naming every endpoint, the bearer scheme, and the contract as PaymentEvent; served without the token', async () => {
    const response = await get(service, '/api/v1/openapi.json', {});
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const document = JSON.parse(await response.text()) as {
      openapi: string;
      paths: Record<string, { get: { responses: Record<string, unknown> } }>;
      security: unknown;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, Record<string, unknown>> };
    };
    assert.match(document.openapi, /^3\.1\./);
    assert.deepEqual(Object.keys(document.paths).sort(), [
      '/api/v1/openapi.json',
      '/api/v1/payment-events',
      '/api/v1/payments/{provider}/{chargeId}',
      '/api/v1/payouts/{provider}/{payoutId}',
    ]);
    assert.deepEqual(document.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: 'INBOX_API_TOKEN' });
    assert.deepEqual(document.security, [{ bearer: [] }]);
    // Every $ref points at a component that exists.
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.includes('PaymentEvent'));
    for (const ref of refs) assert.ok(document.components.schemas[ref], `dangling $ref ${ref}`);
  });
});
