import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { ConfigError } from '../../src/errors.ts';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

function files(content: Record<string, unknown>) {
  return (path: string) => {
    if (path !== '/etc/inbox.json') throw new Error(`ENOENT: ${path}`);
    return JSON.stringify(content);
  };
}

const noFiles = files({});

function problemsOf(env: Record<string, string>, readFile = noFiles): string[] {
  try {
    loadConfig(env, readFile);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  assert.fail('expected a ConfigError');
}

describe('destinations from the environment and INBOX_CONFIG', () => {
  test('DESTINATION_URL_<NAME> and DESTINATION_SECRET_<NAME> enable <name> with the defaults; none configured, none enabled', () => {
    assert.deepEqual(loadConfig({}, noFiles).destinations, []);
    const [orders, ...rest] = loadConfig({ DESTINATION_URL_ORDERS_EU: 'https://orders.example.com/hooks', DESTINATION_SECRET_ORDERS_EU: SECRET }, noFiles).destinations;
    assert.equal(rest.length, 0);
    assert.deepEqual(orders, {
      name: 'orders-eu',
      url: 'https://orders.example.com/hooks',
      secret: SECRET,
      providers: undefined,
      kinds: undefined,
      maxAttempts: 8,
      timeoutMs: 15_000,
      retryDelaySeconds: 5,
      retryDelayMaxSeconds: 3600,
      backoffAfterFailingLanes: 5,
    });
  });

  test('INBOX_CONFIG adds filters and options to a destination the environment enables', () => {
    const readFile = files({ providers: {}, destinations: { ledger: { providers: ['stripe'], kinds: ['payment.paid', 'payment.refunded'], maxAttempts: 3, timeoutMs: 2000 } } });
    const [ledger] = loadConfig(
      { INBOX_CONFIG: '/etc/inbox.json', WEBHOOK_SECRET_STRIPE: 'whsec_test', DESTINATION_URL_LEDGER: 'https://ledger.example.com/', DESTINATION_SECRET_LEDGER: SECRET },
      readFile,
    ).destinations;
    assert.deepEqual([ledger!.providers, ledger!.kinds, ledger!.maxAttempts, ledger!.timeoutMs], [['stripe'], ['payment.paid', 'payment.refunded'], 3, 2000]);
  });

  test('a `providers` filter naming a provider not configured here is a problem naming it and the configured ones (a typo would pass every event over)', () => {
    const readFile = files({ providers: { 'stripe-br': { driver: 'stripe' } }, destinations: { ledger: { providers: ['stripe-br', 'strpe'] } } });
    const env = { INBOX_CONFIG: '/etc/inbox.json', WEBHOOK_SECRET_STRIPE_BR: 'whsec_test', DESTINATION_URL_LEDGER: 'https://ledger.example.com/', DESTINATION_SECRET_LEDGER: SECRET };
    assert.deepEqual(problemsOf(env, readFile), ['destination "ledger": providers: "strpe" is not a provider configured here (stripe-br)']);
    const fixed = files({ providers: { 'stripe-br': { driver: 'stripe' } }, destinations: { ledger: { providers: ['stripe-br'] } } });
    assert.deepEqual(loadConfig(env, fixed).destinations[0]!.providers, ['stripe-br']);
  });

  test('plain http is refused off loopback, allowed to loopback, and everywhere with DESTINATION_ALLOW_HTTP=1', () => {
    const env = (url: string, extra: Record<string, string> = {}) => ({ DESTINATION_URL_APP: url, DESTINATION_SECRET_APP: SECRET, ...extra });
    assert.match(problemsOf(env('http://app.internal/hooks')).join('\n'), /DESTINATION_URL_APP: must be https:\/\/ \(plain http is allowed only to loopback/);
    for (const loopback of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://[::1]:9000/x']) assert.equal(loadConfig(env(loopback), noFiles).destinations.length, 1, loopback);
    assert.equal(loadConfig(env('http://app.internal/hooks', { DESTINATION_ALLOW_HTTP: '1' }), noFiles).destinations[0]!.url, 'http://app.internal/hooks');
  });

  test('every problem is listed at once: other schemes, credentials, bad secrets, a half-configured destination, unknown options', () => {
    const readFile = files({ destinations: { orphan: {}, app: { maxAttempts: 0, retry: 3 } } });
    const problems = problemsOf(
      {
        INBOX_CONFIG: '/etc/inbox.json',
        DESTINATION_URL_APP: 'ftp://files.example.com/',
        DESTINATION_SECRET_APP: SECRET,
        DESTINATION_URL_CREDS: 'https://user:pass@example.com/',
        DESTINATION_SECRET_CREDS: SECRET,
        DESTINATION_URL_PLAIN: 'https://example.com/',
        DESTINATION_SECRET_PLAIN: 'not-a-whsec',
        DESTINATION_URL_SHORT: 'https://example.com/',
        DESTINATION_SECRET_SHORT: `whsec_${Buffer.alloc(8).toString('base64')}`,
        DESTINATION_URL_NOSECRET: 'https://example.com/',
        DESTINATION_ALLOW_HTTP: 'yes',
      },
      readFile,
    );
    const text = problems.join('\n');
    for (const expected of [
      /INBOX_CONFIG \/etc\/inbox.json: destinations\.app: Unrecognized key: "retry"/,
      /DESTINATION_URL_CREDS: must not carry credentials/,
      /DESTINATION_SECRET_PLAIN: must be a Standard Webhooks secret, whsec_<base64>/,
      /DESTINATION_SECRET_SHORT: must hold 24 to 64 bytes of key \(this one holds 8\)/,
      /destination "nosecret": no secret; set DESTINATION_SECRET_NOSECRET/,
      /DESTINATION_ALLOW_HTTP: must be 1 or 0/,
    ]) {
      assert.match(text, expected);
    }
    // The file's unknown key fails the whole `destinations` object, so "orphan" and "app" are judged by the environment alone.
    assert.doesNotMatch(text, /orphan/);
    const withoutFileProblem = problemsOf({ INBOX_CONFIG: '/etc/inbox.json', DESTINATION_URL_APP: 'ftp://files.example.com/', DESTINATION_SECRET_APP: SECRET }, files({ destinations: { orphan: {} } }));
    assert.match(withoutFileProblem.join('\n'), /DESTINATION_URL_APP: must be an https:\/\/ URL \(got ftp:\)/);
    assert.match(withoutFileProblem.join('\n'), /destination "orphan": no URL; set DESTINATION_URL_ORPHAN/);
  });

  test('a variable named in lower or mixed case is a problem naming it and its upper-case name (it was reported as not set at all)', () => {
    const problems = problemsOf({ DESTINATION_URL_orders: 'https://orders.example.com/', DESTINATION_SECRET_Orders_Eu: SECRET, DESTINATION_SECRET_ORDERS: SECRET });
    assert.deepEqual(problems, [
      'DESTINATION_URL_orders: destination variables are named in upper case: DESTINATION_URL_ORDERS',
      'DESTINATION_SECRET_Orders_Eu: destination variables are named in upper case: DESTINATION_SECRET_ORDERS_EU',
      'destination "orders": no URL; set DESTINATION_URL_ORDERS',
    ]);
  });

  test('no secret reaches a problem message', () => {
    const problems = problemsOf({ DESTINATION_URL_APP: 'http://app.internal/', DESTINATION_SECRET_APP: SECRET });
    assert.ok(problems.every((p) => !p.includes(SECRET.slice(6))), problems.join('\n'));
  });
});
