import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { ConfigError } from '../../src/errors.ts';
import { type DeclaredRefetch, apiKeyEnvName } from '../../src/refetch/config-keys.ts';
import { allPaymentKinds, highImpactKinds, resolveRefetchConfig } from '../../src/refetch/settings.ts';

function resolve(provider: string, driver: string, declared: DeclaredRefetch = {}, env: Record<string, string> = {}) {
  const problems: string[] = [];
  const config = resolveRefetchConfig({ provider, driver, declared, envApiKey: env[apiKeyEnvName(provider)] }, problems);
  return { config, problems };
}

function kindsWith(ordering: Record<string, string>, strategy: string): string[] {
  return Object.entries(ordering)
    .filter(([, s]) => s === strategy)
    .map(([kind]) => kind);
}

describe('ordering defaults', () => {
  test('stripe with a key: refetch for refunds, disputes and chargebacks, occurred_at for the rest', () => {
    const { config, problems } = resolve('stripe', 'stripe', {}, { GATEWAY_API_KEY_STRIPE: 'sk_test_1' });
    assert.deepEqual(problems, []);
    assert.deepEqual(kindsWith(config.ordering, 'refetch').sort(), [...highImpactKinds].sort());
    assert.deepEqual(kindsWith(config.ordering, 'occurred_at').sort(), [
      'payment.authorized',
      'payment.canceled',
      'payment.failed',
      'payment.paid',
      'payment.pending',
    ]);
    assert.equal(config.api?.baseUrl, 'https://api.stripe.com');
    assert.equal(config.api?.key, 'sk_test_1');
    assert.equal(config.startupWarning, undefined);
  });

  test('thin notifications (mercadopago, zoop) with a key: refetch for every kind', () => {
    const mp = resolve('mercadopago', 'mercadopago', {}, { GATEWAY_API_KEY_MERCADOPAGO: 'APP_USR-1' });
    assert.deepEqual(mp.problems, []);
    assert.equal(kindsWith(mp.config.ordering, 'refetch').length, allPaymentKinds.length);
    const zoop = resolve('zoop', 'zoop', { api: { marketplaceId: 'mkt_1' } }, { GATEWAY_API_KEY_ZOOP: 'zpk_1' });
    assert.deepEqual(zoop.problems, []);
    assert.equal(kindsWith(zoop.config.ordering, 'refetch').length, allPaymentKinds.length);
    assert.deepEqual(zoop.config.api?.settings, { marketplaceId: 'mkt_1' });
  });

  test('a driver with no gateway API (github, hmac) orders everything by occurred_at, silently', () => {
    const { config, problems } = resolve('github', 'github');
    assert.deepEqual(problems, []);
    assert.equal(kindsWith(config.ordering, 'occurred_at').length, allPaymentKinds.length);
    assert.equal(config.api, undefined);
    assert.equal(config.startupWarning, undefined);
  });
});

describe('without an API key', () => {
  test('a thin provider is a configuration problem naming the variable to set', () => {
    const { problems } = resolve('mercadopago', 'mercadopago');
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /GATEWAY_API_KEY_MERCADOPAGO/);
    assert.match(problems[0]!, /"ordering": \{"default": "occurred_at"\}/);
    assert.match(resolve('zoop-br', 'zoop').problems[0]!, /GATEWAY_API_KEY_ZOOP_BR/);
  });

  test('other providers fall back to occurred_at with one warning naming the kinds', () => {
    const { config, problems } = resolve('stripe', 'stripe');
    assert.deepEqual(problems, []);
    assert.equal(kindsWith(config.ordering, 'occurred_at').length, allPaymentKinds.length);
    assert.equal(config.api, undefined);
    assert.match(config.startupWarning!, /GATEWAY_API_KEY_STRIPE/);
    for (const kind of highImpactKinds) assert.ok(config.startupWarning!.includes(kind), kind);
    assert.ok(!config.startupWarning!.includes('payment.paid'));
  });

  test('a refetch chosen explicitly is a problem, not a silent fallback', () => {
    const { problems } = resolve('asaas', 'asaas', { ordering: { 'payment.paid': 'refetch' } });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /payment\.paid/);
    assert.match(problems[0]!, /GATEWAY_API_KEY_ASAAS/);
  });

  test('a thin provider told to order by occurred_at needs no key', () => {
    const { config, problems } = resolve('mercadopago', 'mercadopago', { ordering: { default: 'occurred_at' } });
    assert.deepEqual(problems, []);
    assert.equal(kindsWith(config.ordering, 'refetch').length, 0);
  });
});

describe('explicit settings', () => {
  test('a kind wins over ordering.default, which wins over the built-in defaults', () => {
    const { config } = resolve(
      'pagarme',
      'pagarme',
      { ordering: { default: 'refetch', 'payment.pending': 'occurred_at' } },
      { GATEWAY_API_KEY_PAGARME: 'sk_1' },
    );
    assert.equal(config.ordering['payment.pending'], 'occurred_at');
    assert.equal(config.ordering['payment.paid'], 'refetch');
    assert.equal(config.ordering['payment.refunded'], 'refetch');
  });

  test('the env key wins over api.key; baseUrl, rate, timeout and breaker settings are taken', () => {
    const { config } = resolve(
      'stripe-br',
      'stripe',
      { api: { key: 'sk_from_file', baseUrl: 'http://127.0.0.1:9/stripe', timeoutMs: 1500, breaker: { consecutiveFailures: 2 } }, ratePerSecond: 3 },
      { GATEWAY_API_KEY_STRIPE_BR: 'sk_from_env' },
    );
    assert.equal(config.api?.key, 'sk_from_env');
    assert.equal(config.api?.baseUrl, 'http://127.0.0.1:9/stripe');
    assert.equal(config.api?.ratePerSecond, 3);
    assert.equal(config.api?.timeoutMs, 1500);
    assert.deepEqual(config.api?.breaker, { consecutiveFailures: 2, halfOpenAfterMs: 30_000 });
    assert.equal(resolve('stripe', 'stripe', { api: { key: 'sk_from_file' } }).config.api?.key, 'sk_from_file');
  });

  test('api.gateway points a generic driver at a gateway API; an unknown one is a problem', () => {
    const { config, problems } = resolve('asaas-token', 'token', { api: { gateway: 'asaas', key: 'k' } });
    assert.deepEqual(problems, []);
    assert.equal(config.api?.gateway.name, 'asaas');
    assert.match(resolve('x', 'token', { api: { gateway: 'paypal' } }).problems[0]!, /api.gateway "paypal" has no API mapping/);
    assert.match(resolve('gh', 'github', { ordering: { default: 'refetch' } }).problems[0]!, /driver "github" has no gateway API/);
  });

  test('zoop without api.marketplaceId is a problem', () => {
    const { problems } = resolve('zoop', 'zoop', {}, { GATEWAY_API_KEY_ZOOP: 'zpk_1' });
    assert.ok(
      problems.some((p) => /api\.marketplaceId/.test(p)),
      problems.join('\n'),
    );
  });
});

describe('through loadConfig', () => {
  const files = (content: unknown) => (path: string) => {
    if (path !== '/etc/inbox.json') throw new Error('ENOENT');
    return JSON.stringify(content);
  };

  test("api, ordering and ratePerSecond are the inbox's keys: stripped before the driver, read into provider.refetch", () => {
    const config = loadConfig(
      { INBOX_CONFIG: '/etc/inbox.json', WEBHOOK_SECRET_STRIPE_BR: 'whsec_1', GATEWAY_API_KEY_STRIPE_BR: 'sk_test_1' },
      files({
        providers: { 'stripe-br': { driver: 'stripe', api: { baseUrl: 'http://127.0.0.1:1' }, ordering: { 'payment.paid': 'refetch' }, ratePerSecond: 2 } },
      }),
    );
    const provider = config.providers.get('stripe-br')!;
    assert.equal(provider.refetch.ordering['payment.paid'], 'refetch');
    assert.equal(provider.refetch.api?.baseUrl, 'http://127.0.0.1:1');
    assert.equal(provider.refetch.api?.ratePerSecond, 2);
  });

  test('zero-config stripe without an API key starts, ordered by occurred_at, with the warning', () => {
    const config = loadConfig({ WEBHOOK_SECRET_STRIPE: 'whsec_1' }, files({}));
    const provider = config.providers.get('stripe')!;
    assert.equal(provider.refetch.api, undefined);
    assert.match(provider.refetch.startupWarning!, /payment\.refunded/);
  });

  test('bad refetch settings are listed with every other problem', () => {
    assert.throws(
      () =>
        loadConfig(
          { INBOX_CONFIG: '/etc/inbox.json', WEBHOOK_SECRET_STRIPE: 'whsec_1' },
          files({
            providers: {
              stripe: {
                driver: 'stripe',
                api: { baseUrl: 'ftp://x', colour: 1 },
                ordering: { 'payment.teleported': 'refetch', default: 'sometimes' },
                ratePerSecond: 0,
              },
            },
          }),
        ),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        const text = error.problems.join('\n');
        assert.match(text, /api\.baseUrl: must be an http\(s\) URL/);
        assert.match(text, /colour/);
        assert.match(text, /payment\.teleported/);
        assert.match(text, /ordering\.default/);
        assert.match(text, /ratePerSecond/);
        return true;
      },
    );
  });
});
