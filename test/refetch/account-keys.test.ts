/**
 * Accounts with an API key of their own (Asaas subaccounts): each account's reads carry its key,
 * have their own breaker, and an account without a key is never read with another's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { asaasApi } from '../../src/gateways/asaas/api.ts';
import { BreakerOpenError, UnknownAccountError } from '../../src/refetch/errors.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import type { GatewayApiTarget } from '../../src/refetch/settings.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const KEYS = { root: '$aact_root', 'loja-a': '$aact_a', 'loja-b': '$aact_b' };
let gateway: FakeGateway;

before(async () => {
  gateway = await startFakeGateway();
});
after(async () => {
  await gateway?.close();
});

function target(): GatewayApiTarget {
  return {
    provider: 'asaas',
    gateway: asaasApi,
    baseUrl: gateway.baseUrl,
    key: KEYS.root,
    settings: {},
    ratePerSecond: 1000,
    timeoutMs: 2000,
    breaker: { consecutiveFailures: 2, halfOpenAfterMs: 60_000 },
    accountKeys: new Map([
      ['loja-a', KEYS['loja-a']],
      ['loja-b', KEYS['loja-b']],
    ]),
  };
}

const payment = (id: string) => ({
  object: 'payment',
  id,
  status: 'RECEIVED',
  value: 10,
  deleted: false,
  refunds: null,
  confirmedDate: '2026-03-01',
  paymentDate: '2026-03-01',
});

describe("reads with an account's own key", () => {
  test("loja-a's key failing opens loja-a's breaker only: loja-b and the provider's own reads go on, each with its key", async () => {
    gateway.rules.push((request) => {
      if (request.headers.access_token === KEYS['loja-a']) return { status: 503, json: {} };
      return { status: 200, json: payment(request.pathname.split('/').at(-1)!) };
    });
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
    for (let i = 0; i < 2; i += 1) await assert.rejects(refetcher.fetchCharge('asaas', `pay_a_${i}`, undefined, 'loja-a'));
    await assert.rejects(refetcher.fetchCharge('asaas', 'pay_a_9', undefined, 'loja-a'), BreakerOpenError);
    assert.equal(refetcher.breakerState('asaas', 'loja-a'), 'open');
    assert.equal((await refetcher.fetchCharge('asaas', 'pay_b_1', undefined, 'loja-b')).status, 'paid');
    assert.equal((await refetcher.fetchCharge('asaas', 'pay_root_1', undefined, null)).status, 'paid');
    assert.deepEqual([refetcher.breakerState('asaas', 'loja-b'), refetcher.breakerState('asaas')], ['closed', 'closed']);
    const keyOf = new Map(gateway.requests.map((r) => [r.pathname.split('/').at(-1), r.headers.access_token]));
    assert.deepEqual([keyOf.get('pay_a_0'), keyOf.get('pay_b_1'), keyOf.get('pay_root_1')], [KEYS['loja-a'], KEYS['loja-b'], KEYS.root]);
    assert.equal(keyOf.has('pay_a_9'), false, 'nothing sent while its breaker is open');
  });

  test('an account with no key configured is not read at all', async () => {
    const before = gateway.requests.length;
    const refetcher = createRefetcher({ targets: [target()], clock: () => NOW });
    await assert.rejects(refetcher.fetchCharge('asaas', 'pay_c_1', undefined, 'loja-c'), UnknownAccountError);
    assert.equal(gateway.requests.length, before);
  });
});
