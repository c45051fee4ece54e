import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/load-config.ts';
import { problemsOf } from '../support/config.ts';

const TOKEN_A = 'asaas-subconta-a-token-0123456789abcdef';
const TOKEN_B = 'asaas-subconta-b-token-fedcba9876543210';

function configWith(accounts: unknown, env: Record<string, string> = {}, driver = 'asaas') {
  const file = JSON.stringify({ providers: { asaas: { driver, accounts } } });
  return () => loadConfig({ INBOX_CONFIG: '/inbox.json', ...env }, () => file);
}

describe('INBOX_CONFIG accounts (Asaas subaccounts)', () => {
  test('accounts with a token each enable the provider without WEBHOOK_SECRET_ASAAS, and their keys go to the refetch target', () => {
    const config = configWith(
      [
        { id: 'loja-a', token: TOKEN_A, apiKey: '$aact_a' },
        { id: 'loja-b', token: TOKEN_B, apiKey: '$aact_b' },
      ],
      { GATEWAY_API_KEY_ASAAS: '$aact_root' },
    )();
    const api = config.providers.get('asaas')!.refetch.api!;
    assert.equal(api.key, '$aact_root');
    assert.deepEqual(
      [...api.accountKeys!],
      [
        ['loja-a', '$aact_a'],
        ['loja-b', '$aact_b'],
      ],
    );
  });

  test('one token for two accounts, or an account token that is also the provider secret, or one id twice: refused, the token never repeated', () => {
    const problems = problemsOf(
      configWith(
        [
          { id: 'loja-a', token: TOKEN_A },
          { id: 'loja-b', token: TOKEN_A },
          { id: 'loja-a', token: TOKEN_B },
          { id: 'loja-c', token: 'asaas-root-token-0123456789abcdef0123' },
        ],
        { WEBHOOK_SECRET_ASAAS: 'asaas-root-token-0123456789abcdef0123' },
      ),
    );
    assert.deepEqual(problems, [
      'provider "asaas": accounts[1] ("loja-b"): its token is also another account\'s or a provider secret; each account needs a token of its own',
      'provider "asaas": accounts[2]: the id "loja-a" is given twice',
      'provider "asaas": accounts[3] ("loja-c"): its token is also another account\'s or a provider secret; each account needs a token of its own',
    ]);
    assert.ok(problems.every((p) => !p.includes(TOKEN_A)));
  });

  test("with the provider's own API key, every account needs its own; without one, none may have one", () => {
    assert.deepEqual(problemsOf(configWith([{ id: 'loja-a', token: TOKEN_A }], { GATEWAY_API_KEY_ASAAS: '$aact_root' })), [
      'provider "asaas": account "loja-a" has no apiKey, and the provider has an API key (GATEWAY_API_KEY_ASAAS or api.key): its charges could not be re-read; give it its own apiKey',
    ]);
    assert.deepEqual(problemsOf(configWith([{ id: 'loja-a', token: TOKEN_A, apiKey: '$aact_a' }])), [
      'provider "asaas": its accounts have API keys but the provider has none; set GATEWAY_API_KEY_ASAAS (or api.key) for its own account too',
    ]);
  });

  test('a driver that cannot tell accounts by token refuses them', () => {
    const problems = problemsOf(configWith([{ id: 'x', token: TOKEN_A }], { WEBHOOK_SECRET_ASAAS: 'whsec_x' }, 'stripe'));
    assert.deepEqual(problems, [
      'provider "asaas": accounts with a webhook token each are for Asaas subaccounts; the stripe driver cannot tell an account\'s deliveries by their token',
    ]);
  });
});
