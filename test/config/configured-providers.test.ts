import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { secretEnvName } from '../../src/config/config.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { builtInDrivers } from '../../src/gateways/registry.ts';
import { noFiles, problemsOf } from '../support/config.ts';

// A secret of the right shape for each driver (Standard Webhooks wants whsec_<base64>).
const zeroConfigSecrets: Record<string, string> = {
  stripe: 'whsec_stripe_secret',
  'standard-webhooks': 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  github: 'github-secret',
  shopify: 'shopify-client-secret',
  asaas: 'asaas-token-of-at-least-32-characters',
  zoop: 'Basic em9vcDpwYXNz',
  'pagarme-legacy': 'ak_test_legacy',
  pagarme: 'inbox:basic-auth-password',
  mercadopago: 'mp-secret-signature',
};
// Thin notifications (Zoop, Mercado Pago) default to refetching, which needs the gateway's API key.
const refetchKeys: Record<string, Record<string, string>> = {
  zoop: { GATEWAY_API_KEY_ZOOP: 'zpk_test' },
  mercadopago: { GATEWAY_API_KEY_MERCADOPAGO: 'APP_USR-test' },
};
// Generic drivers need to be told where things are: they cannot be enabled by a secret alone.
const needOptions = new Set(['hmac', 'token']);

describe('WEBHOOK_SECRET_<NAME> enables the built-in driver of that name', () => {
  test('every built-in driver is covered by this test', () => {
    assert.deepEqual(Object.keys(builtInDrivers).sort(), [...Object.keys(zeroConfigSecrets), ...needOptions].sort());
  });

  for (const [name, secret] of Object.entries(zeroConfigSecrets)) {
    test(`${secretEnvName(name)} → POST /webhooks/${name} with the ${name} driver`, () => {
      // Zoop's API is per marketplace: refetching needs its id, which only the config file can give.
      const file = name === 'zoop' ? JSON.stringify({ providers: { zoop: { driver: 'zoop', api: { marketplaceId: 'mkt_1' } } } }) : undefined;
      const env = { [secretEnvName(name)]: secret, ...refetchKeys[name], ...(file ? { INBOX_CONFIG: '/inbox.json' } : {}) };
      const config = loadConfig(env, (path) => file ?? noFiles(path));
      const provider = config.providers.get(name);
      assert.equal(provider?.driver.name, name);
      assert.ok(provider.retentionDays > provider.resendWindowDays, 'the default retention outlives the resend window');
    });
  }

  for (const name of needOptions) {
    test(`${secretEnvName(name)} alone says which options the ${name} driver needs`, () => {
      const problems = problemsOf(() => loadConfig({ [secretEnvName(name)]: 'a-secret' }, noFiles));
      assert.ok(
        problems.some((p) => p.startsWith(`provider "${name}": option header:`)),
        problems.join('\n'),
      );
      assert.ok(
        problems.some((p) => p.startsWith(`provider "${name}": option typePath:`)),
        problems.join('\n'),
      );
    });
  }

  test('drivers that authenticate without a secret can be declared without one', () => {
    const file = JSON.stringify({ providers: { pagarme: { driver: 'pagarme' }, 'zoop-br': { driver: 'zoop', api: { marketplaceId: 'mkt_1' } } } });
    const config = loadConfig({ INBOX_CONFIG: '/inbox.json', GATEWAY_API_KEY_ZOOP_BR: 'zpk_test' }, () => file);
    assert.equal(config.providers.get('pagarme')?.driver.name, 'pagarme');
    assert.equal(config.providers.get('zoop-br')?.driver.name, 'zoop');
  });

  test('a Standard Webhooks secret that is not whsec_<base64> is reported', () => {
    const problems = problemsOf(() => loadConfig({ WEBHOOK_SECRET_STANDARD_WEBHOOKS: 'whsec_not base64!' }, noFiles));
    assert.deepEqual(problems, ['provider "standard-webhooks": secret #1 is not a Standard Webhooks secret (whsec_ followed by base64)']);
  });
});

describe('INBOX_CONFIG driver options', () => {
  test('bad options on several providers: every problem is listed, each under its provider', () => {
    const file = JSON.stringify({
      providers: {
        acme: { driver: 'hmac', algorithm: 'md5', prefx: 'sha256=' },
        mp: { driver: 'mercadopago', checkTimestamp: 'yes' },
        pagarme: { driver: 'pagarme', jwksUrl: 'http://keys.example.com/jwks.json' },
        asaas: { driver: 'asaas' },
      },
    });
    const problems = problemsOf(() =>
      loadConfig({ INBOX_CONFIG: '/inbox.json', WEBHOOK_SECRET_ACME: 's', WEBHOOK_SECRET_MP: 's', GATEWAY_API_KEY_MP: 'k' }, () => file),
    );
    const expected = [
      /^provider "acme": option header: /,
      /^provider "acme": option algorithm: /,
      /^provider "acme": option \(options\): Unrecognized key: "prefx"/,
      /^provider "acme": option typePath: typePath or typeHeader is required/,
      /^provider "mp": option checkTimestamp: /,
      /^provider "pagarme": option jwksUrl: must be https/,
      /^provider "asaas": no secret; set WEBHOOK_SECRET_ASAAS/,
    ];
    for (const pattern of expected)
      assert.ok(
        problems.some((p) => pattern.test(p)),
        `${pattern} in:\n${problems.join('\n')}`,
      );
    assert.equal(problems.length, expected.length, problems.join('\n'));
  });

  test('a generic hmac provider configured in full', () => {
    const file = JSON.stringify({
      providers: {
        acme: { driver: 'hmac', header: 'X-Acme-Signature', prefix: 'sha256=', idPath: 'event_id', typePath: 'event_type', resourcePath: 'charge.id' },
      },
    });
    const config = loadConfig({ INBOX_CONFIG: '/inbox.json', WEBHOOK_SECRET_ACME: 'acme-secret' }, () => file);
    assert.equal(config.providers.get('acme')?.driver.name, 'hmac');
  });
});
