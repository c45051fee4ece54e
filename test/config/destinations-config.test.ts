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
    const [orders, ...rest] = loadConfig(
      { DESTINATION_URL_ORDERS_EU: 'https://orders.example.com/hooks', DESTINATION_SECRET_ORDERS_EU: SECRET },
      noFiles,
    ).destinations;
    assert.equal(rest.length, 0);
    assert.deepEqual(orders, {
      name: 'orders-eu',
      url: 'https://orders.example.com/hooks',
      transport: { kind: 'http' },
      secrets: [SECRET],
      providers: undefined,
      accounts: undefined,
      kinds: undefined,
      maxAttempts: 8,
      timeoutMs: 15_000,
      retryDelaySeconds: 5,
      retryDelayMaxSeconds: 3600,
      backoffAfterFailingLanes: 5,
      patienceSeconds: 3600,
      start: 'now',
    });
  });

  test('INBOX_CONFIG adds filters and options to a destination the environment enables', () => {
    const readFile = files({
      providers: {},
      destinations: { ledger: { providers: ['stripe'], kinds: ['payment.paid', 'payment.refunded'], maxAttempts: 3, timeoutMs: 2000 } },
    });
    const [ledger] = loadConfig(
      {
        INBOX_CONFIG: '/etc/inbox.json',
        WEBHOOK_SECRET_STRIPE: 'whsec_test',
        DESTINATION_URL_LEDGER: 'https://ledger.example.com/',
        DESTINATION_SECRET_LEDGER: SECRET,
      },
      readFile,
    ).destinations;
    assert.deepEqual([ledger!.providers, ledger!.kinds, ledger!.maxAttempts, ledger!.timeoutMs], [['stripe'], ['payment.paid', 'payment.refunded'], 3, 2000]);
  });

  test('a `providers` filter naming a provider not configured here is a problem naming it and the configured ones (a typo would pass every event over)', () => {
    const readFile = files({ providers: { 'stripe-br': { driver: 'stripe' } }, destinations: { ledger: { providers: ['stripe-br', 'strpe'] } } });
    const env = {
      INBOX_CONFIG: '/etc/inbox.json',
      WEBHOOK_SECRET_STRIPE_BR: 'whsec_test',
      DESTINATION_URL_LEDGER: 'https://ledger.example.com/',
      DESTINATION_SECRET_LEDGER: SECRET,
    };
    assert.deepEqual(problemsOf(env, readFile), ['destination "ledger": providers: "strpe" is not a provider configured here (stripe-br)']);
    const fixed = files({ providers: { 'stripe-br': { driver: 'stripe' } }, destinations: { ledger: { providers: ['stripe-br'] } } });
    assert.deepEqual(loadConfig(env, fixed).destinations[0]!.providers, ['stripe-br']);
  });

  test('plain http is refused off loopback, allowed to loopback, and everywhere with DESTINATION_ALLOW_HTTP=1', () => {
    const env = (url: string, extra: Record<string, string> = {}) => ({ DESTINATION_URL_APP: url, DESTINATION_SECRET_APP: SECRET, ...extra });
    assert.match(problemsOf(env('http://app.internal/hooks')).join('\n'), /DESTINATION_URL_APP: must be https:\/\/ \(plain http is allowed only to loopback/);
    for (const loopback of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://[::1]:9000/x'])
      assert.equal(loadConfig(env(loopback), noFiles).destinations.length, 1, loopback);
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
      /DESTINATION_SECRET_PLAIN: must be a Standard Webhooks secret, whsec_<base64> \(or whsk_<base64> for ed25519\)/,
      /DESTINATION_SECRET_SHORT: must hold 24 to 64 bytes of key \(this one holds 8\)/,
      /destination "nosecret": no secret; set DESTINATION_SECRET_NOSECRET/,
      /DESTINATION_ALLOW_HTTP: must be 1 or 0/,
    ]) {
      assert.match(text, expected);
    }
    // The file's unknown key fails the whole `destinations` object, so "orphan" and "app" are judged by the environment alone.
    assert.doesNotMatch(text, /orphan/);
    const withoutFileProblem = problemsOf(
      { INBOX_CONFIG: '/etc/inbox.json', DESTINATION_URL_APP: 'ftp://files.example.com/', DESTINATION_SECRET_APP: SECRET },
      files({ destinations: { orphan: {} } }),
    );
    assert.match(withoutFileProblem.join('\n'), /DESTINATION_URL_APP: must be an https:\/\/ URL, or a broker's amqps:\/\/ or tls:\/\/ \(got ftp:\)/);
    assert.match(withoutFileProblem.join('\n'), /destination "orphan": no URL; set DESTINATION_URL_ORPHAN/);
  });

  test('a variable named in lower or mixed case is a problem naming it and its upper-case name (it was reported as not set at all)', () => {
    const problems = problemsOf({
      DESTINATION_URL_orders: 'https://orders.example.com/',
      DESTINATION_SECRET_Orders_Eu: SECRET,
      DESTINATION_SECRET_ORDERS: SECRET,
    });
    assert.deepEqual(problems, [
      'DESTINATION_URL_orders: destination variables are named in upper case: DESTINATION_URL_ORDERS',
      'DESTINATION_SECRET_Orders_Eu: destination variables are named in upper case: DESTINATION_SECRET_ORDERS_EU',
      'destination "orders": no URL; set DESTINATION_URL_ORDERS',
    ]);
  });

  test('no secret reaches a problem message', () => {
    const problems = problemsOf({ DESTINATION_URL_APP: 'http://app.internal/', DESTINATION_SECRET_APP: SECRET });
    assert.ok(
      problems.every((p) => !p.includes(SECRET.slice(6))),
      problems.join('\n'),
    );
  });

  test('several secrets, space-separated, sign during a rotation; whsk_ (an ed25519 seed) signs v1a; each bad one is named by its position, never shown', () => {
    const ed25519 = `whsk_${Buffer.alloc(32, 9).toString('base64')}`;
    const other = `whsec_${Buffer.alloc(32, 8).toString('base64')}`;
    const env = (secret: string) => ({ DESTINATION_URL_APP: 'https://app.example.com/', DESTINATION_SECRET_APP: secret });
    assert.deepEqual(loadConfig(env(`${SECRET} ${other}`), noFiles).destinations[0]!.secrets, [SECRET, other]);
    assert.deepEqual(loadConfig(env(` ${SECRET}   ${ed25519} `), noFiles).destinations[0]!.secrets, [SECRET, ed25519]);
    const problems = (secret: string) => problemsOf(env(secret)).join('\n');
    assert.match(problems(`${SECRET} whsec_short`), /DESTINATION_SECRET_APP \(secret 2 of 2\): must be whsec_ followed by base64/);
    assert.match(problems(`${SECRET} ${SECRET}`), /DESTINATION_SECRET_APP: names the same secret twice/);
    assert.match(
      problems([SECRET, other, ed25519, `whsec_${Buffer.alloc(24, 1).toString('base64')}`, `whsec_${Buffer.alloc(24, 2).toString('base64')}`].join(' ')),
      /holds 5 secrets; at most 4/,
    );
    assert.match(problems(`whsk_${Buffer.alloc(64, 1).toString('base64')}`), /DESTINATION_SECRET_APP: must hold a 32-byte ed25519 seed \(this one holds 64\)/);
    assert.match(problems('   '), /DESTINATION_SECRET_APP: is empty/);
    for (const secret of [SECRET, other, ed25519]) assert.ok(!problems(`${secret} nope`).includes(secret.slice(6)), 'no secret in a problem');
  });

  test('patienceSeconds (default 3600) and start (default now; beginning; an RFC 3339 time) come from INBOX_CONFIG; a bad start is named', () => {
    const env = { INBOX_CONFIG: '/etc/inbox.json', DESTINATION_URL_APP: 'https://app.example.com/', DESTINATION_SECRET_APP: SECRET };
    const app = (options: Record<string, unknown>) => loadConfig(env, files({ destinations: { app: options } })).destinations[0]!;
    assert.deepEqual([app({}).patienceSeconds, app({}).start], [3600, 'now']);
    assert.deepEqual([app({ patienceSeconds: 0 }).patienceSeconds, app({ start: 'beginning' }).start], [0, 'beginning']);
    assert.deepEqual(app({ start: '2026-12-01T00:00:00-03:00' }).start, new Date('2026-12-01T03:00:00Z'));
    const problems = (options: Record<string, unknown>) => problemsOf(env, files({ destinations: { app: options } })).join('\n');
    assert.match(problems({ start: 'yesterday' }), /destinations\.app\.start: must be "now", "beginning" or an RFC 3339 time/);
    assert.match(problems({ patienceSeconds: -1 }), /destinations\.app\.patienceSeconds/);
  });

  test('a broker URL makes a RabbitMQ or NATS destination with its defaults; INBOX_CONFIG names the exchange, subject prefix and stream', () => {
    const env = {
      DESTINATION_URL_BUS: 'amqps://inbox:s3cret@rabbit.internal/payments',
      DESTINATION_SECRET_BUS: SECRET,
      DESTINATION_URL_JS: 'tls://inbox:s3cret@nats.internal:4222',
      DESTINATION_SECRET_JS: SECRET,
    };
    const [bus, js] = loadConfig(env, noFiles).destinations;
    assert.deepEqual(
      [bus!.transport, js!.transport],
      [
        { kind: 'rabbitmq', exchange: 'payment-events' },
        { kind: 'nats', subjectPrefix: 'payment-events', stream: undefined },
      ],
    );
    assert.equal(bus!.url, 'amqps://inbox:s3cret@rabbit.internal/payments', 'a broker URL carries its credentials');
    const readFile = files({
      destinations: {
        bus: { rabbitmq: { exchange: 'payments.events' } },
        js: { nats: { subjectPrefix: 'acme.payments', stream: 'PAYMENTS' }, maxAttempts: 3 },
      },
    });
    const configured = loadConfig({ ...env, INBOX_CONFIG: '/etc/inbox.json' }, readFile).destinations;
    assert.deepEqual(
      configured.map((d) => d.transport),
      [
        { kind: 'rabbitmq', exchange: 'payments.events' },
        { kind: 'nats', subjectPrefix: 'acme.payments', stream: 'PAYMENTS' },
      ],
    );
    assert.equal(configured[1]!.maxAttempts, 3);
    assert.ok(!('nats' in configured[1]!), 'the broker options live in `transport` only');
  });

  test('plain amqp:// and nats:// go only to loopback unless DESTINATION_ALLOW_HTTP=1; broker options must match the URL; names are checked', () => {
    const env = (url: string, extra: Record<string, string> = {}) => ({ DESTINATION_URL_BUS: url, DESTINATION_SECRET_BUS: SECRET, ...extra });
    assert.match(
      problemsOf(env('amqp://guest:guest@rabbit.internal/')).join('\n'),
      /DESTINATION_URL_BUS: must be amqps:\/\/ \(plain amqp:\/\/ is allowed only to loopback, or everywhere with DESTINATION_ALLOW_HTTP=1\)/,
    );
    assert.match(problemsOf(env('nats://nats.internal:4222')).join('\n'), /DESTINATION_URL_BUS: must be tls:\/\//);
    for (const loopback of ['amqp://guest:guest@127.0.0.1:5672/', 'nats://localhost:4222'])
      assert.equal(loadConfig(env(loopback), noFiles).destinations.length, 1, loopback);
    assert.equal(loadConfig(env('nats://nats.internal:4222', { DESTINATION_ALLOW_HTTP: '1' }), noFiles).destinations[0]!.transport.kind, 'nats');
    const readFile = files({ destinations: { bus: { nats: { subjectPrefix: 'payments.>' }, rabbitmq: { exchange: '' } } } });
    const text = problemsOf({ ...env('amqp://127.0.0.1/'), INBOX_CONFIG: '/etc/inbox.json' }, readFile).join('\n');
    assert.match(text, /destinations\.bus\.nats\.subjectPrefix: a subject prefix is dot-separated tokens/);
    assert.match(text, /destinations\.bus\.rabbitmq\.exchange: exchange names are 1 to 127/);
    const mismatch = problemsOf(
      { ...env('amqp://127.0.0.1/'), INBOX_CONFIG: '/etc/inbox.json' },
      files({ destinations: { bus: { nats: { stream: 'PAYMENTS' } } } }),
    );
    assert.deepEqual(mismatch, ['destination "bus": "nats" options need a nats:// or tls:// URL']);
  });

  test('a broker URL that reaches a problem message never shows its password', () => {
    const problems = problemsOf({ DESTINATION_URL_BUS: 'amqp://inbox:hunter2-secret@rabbit.internal/', DESTINATION_SECRET_BUS: SECRET });
    assert.ok(problems.length > 0 && problems.every((p) => !p.includes('hunter2')), problems.join('\n'));
  });
});
