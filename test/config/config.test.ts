import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { noFiles, problemsOf } from '../support/config.ts';

describe('loadConfig', () => {
  test('defaults: port 3000, embedded database, 1 MiB body limit, no providers', () => {
    const config = loadConfig({}, noFiles);
    assert.equal(config.port, 3000);
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.maxBodyBytes, 1024 * 1024);
    assert.equal(config.providers.size, 0);
    assert.equal(config.worker.maxAttempts, 10);
  });

  test('WEBHOOK_SECRET_STRIPE enables the stripe provider; commas give several secrets for rotation', () => {
    const config = loadConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_new, whsec_old' }, noFiles);
    const stripe = config.providers.get('stripe');
    assert.ok(stripe);
    assert.equal(stripe.driver.name, 'stripe');
    assert.equal(stripe.retentionDays, 30);
    assert.equal(stripe.unknownPayment, 'create');
  });

  test('INBOX_CONFIG declares two Stripe accounts, each with its own secret from the environment', () => {
    const file = JSON.stringify({
      providers: { 'stripe-br': { driver: 'stripe', unknownPayment: 'require' }, 'stripe-us': { driver: 'stripe', retentionDays: 45 } },
    });
    const config = loadConfig({ INBOX_CONFIG: '/etc/inbox.json', WEBHOOK_SECRET_STRIPE_BR: 'whsec_br', WEBHOOK_SECRET_STRIPE_US: 'whsec_us' }, (path) =>
      path === '/etc/inbox.json' ? file : noFiles(path),
    );
    assert.deepEqual([...config.providers.keys()].sort(), ['stripe-br', 'stripe-us']);
    assert.equal(config.providers.get('stripe-br')!.unknownPayment, 'require');
    assert.equal(config.providers.get('stripe-us')!.retentionDays, 45);
  });

  test('reconcile.settlementDays per provider in INBOX_CONFIG (unset: the ledger default); RECONCILE_CRON and RECONCILE_WINDOW_DAYS; bad values named', () => {
    const file = JSON.stringify({ providers: { asaas: { driver: 'asaas', reconcile: { settlementDays: 40 } }, stripe: { driver: 'stripe' } } });
    const read = (path: string) => (path === '/etc/inbox.json' ? file : noFiles(path));
    const config = loadConfig(
      { INBOX_CONFIG: '/etc/inbox.json', WEBHOOK_SECRET_ASAAS: 'token', WEBHOOK_SECRET_STRIPE: 'whsec_x', RECONCILE_WINDOW_DAYS: '3' },
      read,
    );
    assert.deepEqual([config.providers.get('asaas')!.settlementDays, config.providers.get('stripe')!.settlementDays], [40, undefined]);
    assert.deepEqual([config.operations.reconcileCron, config.operations.reconcileWindowDays], ['45 4 * * *', 3]);
    const bad = JSON.stringify({ providers: { asaas: { driver: 'asaas', reconcile: { settlementDays: -1, after: 2 } } } });
    const problems = problemsOf(() => loadConfig({ INBOX_CONFIG: '/etc/bad.json', WEBHOOK_SECRET_ASAAS: 'token', RECONCILE_CRON: 'daily' }, () => bad)).join(
      '\n',
    );
    assert.match(problems, /providers\.asaas\.reconcile\.settlementDays/);
    assert.match(problems, /providers\.asaas\.reconcile: .*after/);
    assert.match(problems, /RECONCILE_CRON: must be a 5-field cron expression/);
  });

  test('INGEST_LINGER_MS: 4 ms in the receiver role, none in all (workers share the event loop); a value set wins; above 50 is refused', () => {
    assert.equal(loadConfig({ INBOX_ROLE: 'receiver' }, noFiles).commitLingerMs, 4);
    assert.equal(loadConfig({}, noFiles).commitLingerMs, 0);
    assert.equal(loadConfig({ INGEST_LINGER_MS: '2' }, noFiles).commitLingerMs, 2);
    assert.equal(loadConfig({ INBOX_ROLE: 'receiver', INGEST_LINGER_MS: '0' }, noFiles).commitLingerMs, 0);
    assert.match(problemsOf(() => loadConfig({ INGEST_LINGER_MS: '51' }, noFiles)).join('\n'), /INGEST_LINGER_MS/);
  });

  test('every problem is reported at once', () => {
    const problems = problemsOf(() =>
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://nope', MAX_BODY_BYTES: '0', WEBHOOK_SECRET_NOPE: 'x', INBOX_RETENTION_DAYS: '2' }, noFiles),
    );
    const text = problems.join('\n');
    assert.match(text, /PORT/);
    assert.match(text, /DATABASE_URL/);
    assert.match(text, /MAX_BODY_BYTES/);
    assert.match(text, /unknown driver "nope"/);
    assert.ok(problems.length >= 4, text);
  });

  test('a bad value does not hide the problems that checks of the other values find (PORT=abc with INBOX_RETENTION_DAYS=2)', () => {
    const problems = problemsOf(() =>
      loadConfig(
        {
          PORT: 'abc',
          INBOX_RETENTION_DAYS: '2',
          WEBHOOK_SECRET_STRIPE: 'whsec_x',
          WORKER_RETRY_DELAY_SECONDS: '60',
          WORKER_RETRY_DELAY_MAX_SECONDS: '10',
          WORKER_EXPIRE_IN_SECONDS: '60',
          WORKER_HEARTBEAT_SECONDS: '60',
        },
        noFiles,
      ),
    );
    const text = problems.join('\n');
    assert.match(text, /^PORT: /m);
    assert.match(text, /provider "stripe": retention of 2 days does not outlive the gateway's 3-day resend window/);
    assert.match(text, /WORKER_RETRY_DELAY_MAX_SECONDS: must be at least WORKER_RETRY_DELAY_SECONDS/);
    assert.match(text, /WORKER_HEARTBEAT_SECONDS: must be less than WORKER_EXPIRE_IN_SECONDS \(60\)/);
    assert.equal(problems.length, 4, text);
  });

  test('a retention window that does not outlive the gateway resend window is refused', () => {
    const problems = problemsOf(() => loadConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_x', INBOX_RETENTION_DAYS: '3' }, noFiles));
    assert.match(problems.join('\n'), /resend window/);
  });

  test('dedupe keys are kept 400 days by default, per provider in INBOX_CONFIG, and never less than the payloads', () => {
    assert.equal(loadConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_x' }, noFiles).providers.get('stripe')!.keyRetentionDays, 400);
    const file = JSON.stringify({ providers: { asaas: { driver: 'asaas', retentionDays: 60, keyRetentionDays: 90 } } });
    const asaas = loadConfig({ INBOX_CONFIG: 'f.json', WEBHOOK_SECRET_ASAAS: 'token' }, () => file).providers.get('asaas')!;
    assert.deepEqual([asaas.retentionDays, asaas.keyRetentionDays], [60, 90]);

    const shorter = problemsOf(() => loadConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_x', INBOX_RETENTION_DAYS: '90', INBOX_KEY_RETENTION_DAYS: '60' }, noFiles));
    assert.match(shorter.join('\n'), /provider "stripe": keyRetentionDays \(60\) must be at least retentionDays \(90\)/);
    const inFile = JSON.stringify({ providers: { stripe: { driver: 'stripe', keyRetentionDays: 10 } } });
    const problems = problemsOf(() => loadConfig({ INBOX_CONFIG: 'f.json', WEBHOOK_SECRET_STRIPE: 'whsec_x' }, () => inFile));
    assert.match(problems.join('\n'), /keyRetentionDays \(10\) must be at least retentionDays \(30\)/);
    assert.match(problemsOf(() => loadConfig({ INBOX_KEY_RETENTION_DAYS: '0' }, noFiles)).join('\n'), /INBOX_KEY_RETENTION_DAYS/);
  });

  test('a declared provider without any secret is refused with the variable to set', () => {
    const file = JSON.stringify({ providers: { 'stripe-br': { driver: 'stripe' } } });
    const problems = problemsOf(() => loadConfig({ INBOX_CONFIG: 'f.json' }, () => file));
    assert.match(problems.join('\n'), /WEBHOOK_SECRET_STRIPE_BR/);
  });

  test('the worker heartbeat: 30 s by default, off when expiry is already as fast, explicit values from 10 s up to below the expiry', () => {
    assert.equal(loadConfig({}, noFiles).worker.heartbeatSeconds, 30);
    assert.equal(loadConfig({ WORKER_HEARTBEAT_SECONDS: '10' }, noFiles).worker.heartbeatSeconds, 10);
    assert.equal(loadConfig({ WORKER_EXPIRE_IN_SECONDS: '31' }, noFiles).worker.heartbeatSeconds, 30);
    // A configuration written before the setting existed still starts: the default steps aside.
    assert.equal(loadConfig({ WORKER_EXPIRE_IN_SECONDS: '30' }, noFiles).worker.heartbeatSeconds, undefined);
    assert.equal(loadConfig({ WORKER_EXPIRE_IN_SECONDS: '11', WORKER_HEARTBEAT_SECONDS: '10' }, noFiles).worker.heartbeatSeconds, 10);

    assert.match(problemsOf(() => loadConfig({ WORKER_HEARTBEAT_SECONDS: '9' }, noFiles)).join('\n'), /WORKER_HEARTBEAT_SECONDS/);
    assert.match(problemsOf(() => loadConfig({ WORKER_HEARTBEAT_SECONDS: '12.5' }, noFiles)).join('\n'), /WORKER_HEARTBEAT_SECONDS/);
    assert.match(problemsOf(() => loadConfig({ WORKER_HEARTBEAT_SECONDS: 'often' }, noFiles)).join('\n'), /WORKER_HEARTBEAT_SECONDS/);
    for (const heartbeat of ['60', '61']) {
      const problems = problemsOf(() => loadConfig({ WORKER_EXPIRE_IN_SECONDS: '60', WORKER_HEARTBEAT_SECONDS: heartbeat }, noFiles));
      assert.match(problems.join('\n'), /WORKER_HEARTBEAT_SECONDS: must be less than WORKER_EXPIRE_IN_SECONDS \(60\)/);
    }
  });

  test('ingest first: on by default, with its thresholds; off, and bad values refused by name', () => {
    assert.deepEqual(loadConfig({}, noFiles).ingestFirst, {
      enabled: true,
      ackLatencyMs: 10,
      queueDepth: 16,
      quietMs: 1000,
      yieldBatchSize: 10,
      yieldPauseMs: 50,
    });
    assert.equal(loadConfig({ INGEST_FIRST: 'off' }, noFiles).ingestFirst.enabled, false);
    assert.equal(loadConfig({ INGEST_PRESSURE_ACK_MS: '0', INGEST_PRESSURE_QUEUE_DEPTH: '0' }, noFiles).ingestFirst.queueDepth, 0);
    const problems = problemsOf(() =>
      loadConfig({ INGEST_FIRST: 'yes', INGEST_QUIET_MS: '0', WORKER_YIELD_BATCH_SIZE: '0', WORKER_YIELD_PAUSE_MS: 'soon' }, noFiles),
    ).join('\n');
    for (const variable of ['INGEST_FIRST', 'INGEST_QUIET_MS', 'WORKER_YIELD_BATCH_SIZE', 'WORKER_YIELD_PAUSE_MS'])
      assert.match(problems, new RegExp(`${variable}:`));
  });

  test('the dashboard’s names: INBOX_PUBLIC_URL becomes an origin, INBOX_ALLOWED_HOSTS a lower-cased list', () => {
    const dashboard = loadConfig(
      { INBOX_PUBLIC_URL: 'HTTPS://Ops.Example.com:8443/dashboard', INBOX_ALLOWED_HOSTS: ' Inbox:3000, ,ops-2.internal ' },
      noFiles,
    ).dashboard;
    assert.equal(dashboard.publicOrigin, 'https://ops.example.com:8443');
    assert.equal(dashboard.publishedOverHttps, true, 'the scheme in any case');
    assert.deepEqual(dashboard.allowedHosts, ['inbox:3000', 'ops-2.internal']);
    assert.equal(loadConfig({ INBOX_PUBLIC_URL: 'http://inbox.internal:8443' }, noFiles).dashboard.publishedOverHttps, false);
    const none = loadConfig({}, noFiles).dashboard;
    assert.equal(none.publicOrigin, undefined);
    assert.equal(none.publishedOverHttps, false);
    assert.deepEqual(none.allowedHosts, []);
  });

  test('a public URL without http(s) and a host list with a wildcard or a path are refused', () => {
    for (const env of [{ INBOX_PUBLIC_URL: 'ops.example.com' }, { INBOX_PUBLIC_URL: 'ftp://ops.example.com' }]) {
      assert.match(problemsOf(() => loadConfig(env, noFiles)).join('\n'), /INBOX_PUBLIC_URL: must be the http:\/\/ or https:\/\/ URL/);
    }
    for (const hosts of ['ok.example,*.example.com', 'ok.example/dashboard', 'user@ok.example']) {
      assert.match(
        problemsOf(() => loadConfig({ INBOX_ALLOWED_HOSTS: hosts }, noFiles)).join('\n'),
        /INBOX_ALLOWED_HOSTS: must be host names or host:port/,
        hosts,
      );
    }
  });

  test('a warning at start when the dashboard listens beyond loopback but answers only to loopback names', () => {
    const warningOf = (env: Record<string, string>) =>
      loadConfig({ INBOX_ADMIN_TOKEN: 'config-test-admin-token-0123', ...env }, noFiles).dashboard.startupWarning;
    assert.match(warningOf({}) ?? '', /HOST=0\.0\.0\.0 .* set INBOX_PUBLIC_URL/);
    assert.match(warningOf({ HOST: '::' }) ?? '', /HOST=::/);
    assert.equal(warningOf({ HOST: '127.0.0.1' }), undefined);
    assert.equal(warningOf({ HOST: '::1' }), undefined);
    assert.equal(warningOf({ INBOX_PUBLIC_URL: 'https://ops.example.com' }), undefined);
    assert.equal(warningOf({ INBOX_ALLOWED_HOSTS: 'inbox' }), undefined);
    assert.equal(warningOf({ INBOX_DASHBOARD: 'off' }), undefined, 'no dashboard, nothing to warn about');
  });

  // Found by a probe: a top-level key the file does not take ({"bogus":1}, or a misspelt
  // "provider") was dropped without a word, so its settings silently did not apply.
  test('an unknown top-level key in INBOX_CONFIG is a problem naming the key; providers and destinations are taken', () => {
    const problems = problemsOf(() => loadConfig({ INBOX_CONFIG: 'f.json' }, () => JSON.stringify({ bogus: 1, provider: {} })));
    assert.deepEqual(
      problems.filter((p) => p.includes('f.json')),
      ['INBOX_CONFIG f.json: unknown keys "bogus", "provider"; the file takes "providers" and "destinations"'],
    );
    const file = JSON.stringify({ providers: { 'stripe-br': { driver: 'stripe' } }, destinations: {} });
    assert.ok(loadConfig({ INBOX_CONFIG: 'f.json', WEBHOOK_SECRET_STRIPE_BR: 'whsec_br' }, () => file).providers.has('stripe-br'));
  });

  // Found by a probe: a bad name under "providers" or "destinations" said only "Invalid key in
  // record" (zod 4's issue for a record key), never what a name may be.
  test('a bad provider or destination name in INBOX_CONFIG says what names may be', () => {
    const file = JSON.stringify({ providers: { Stripe_BR: { driver: 'stripe' } }, destinations: { Orders: {} } });
    const problems = problemsOf(() => loadConfig({ INBOX_CONFIG: 'f.json' }, () => file)).filter((p) => p.includes('f.json'));
    assert.deepEqual(problems.sort(), [
      'INBOX_CONFIG f.json: destinations.Orders: destination names are lower-case letters, digits and dashes, at most 30',
      'INBOX_CONFIG f.json: providers.Stripe_BR: provider names are lower-case letters, digits and dashes, at most 30',
    ]);
  });

  test('an unreadable INBOX_CONFIG is a readable problem, not a crash', () => {
    const problems = problemsOf(() => loadConfig({ INBOX_CONFIG: '/missing.json' }, noFiles));
    assert.match(problems.join('\n'), /INBOX_CONFIG: cannot read \/missing.json/);
  });
});

test('the service exits 1 and lists every problem when the configuration is bad', () => {
  const result = spawnSync(process.execPath, ['src/main.ts'], {
    env: { PATH: process.env.PATH, PORT: 'x', WEBHOOK_SECRET_NOPE: 'y' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /Invalid configuration/);
  assert.match(result.stderr, /PORT/);
  assert.match(result.stderr, /unknown driver "nope"/);
});
