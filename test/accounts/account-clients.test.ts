/**
 * The refetcher's clients per (provider, account) of a connect provider, against a fake Stripe API
 * over real HTTP: each account's breaker is its own, and the bounded set of clients never drops
 * one whose breaker is open (that would let a failing account's reads through again).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { stripeApi } from '../../src/gateways/stripe/api.ts';
import { BreakerOpenError, GatewayUnavailableError } from '../../src/refetch/errors.ts';
import { declareRefetchMetrics } from '../../src/refetch/metrics.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import type { GatewayApiTarget } from '../../src/refetch/settings.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';
import { stripeCharge } from '../support/stripe.ts';
import { serveConnectedCharges } from './support.ts';

let gateway: FakeGateway;
const owners = new Map<string, { account: string; charge: Record<string, unknown> }>();
/** acct_flaky answers 500 while this is true. */
let flakyFails = true;

before(async () => {
  gateway = await startFakeGateway();
  gateway.rules.push((request) =>
    request.headers['stripe-account'] === 'acct_bad' || (request.headers['stripe-account'] === 'acct_flaky' && flakyFails)
      ? { status: 500, json: { error: { message: 'internal' } } }
      : undefined,
  );
  serveConnectedCharges(gateway, owners);
  for (const account of ['acct_1', 'acct_2', 'acct_3', 'acct_bad', 'acct_flaky'])
    owners.set(`ch_${account}`, { account, charge: stripeCharge(`ch_${account}`) });
});

after(async () => {
  await gateway?.close();
});

function connectTarget(): GatewayApiTarget {
  return {
    provider: 'stripe',
    gateway: stripeApi,
    baseUrl: gateway.baseUrl,
    key: 'sk_test_platform',
    settings: {},
    ratePerSecond: 1000,
    timeoutMs: 2000,
    breaker: { consecutiveFailures: 2, halfOpenAfterMs: 60_000 },
    connect: true,
  };
}

describe('clients per account', () => {
  test("one account's failures open its own breaker; the provider's and the other accounts' stay closed, and kept while open", async () => {
    const refetcher = createRefetcher({ targets: [connectTarget()], clock: () => new Date(), maxAccountClients: 2 });
    for (let i = 0; i < 2; i += 1) await assert.rejects(refetcher.fetchCharge('stripe', 'ch_acct_bad', undefined, 'acct_bad'), GatewayUnavailableError);
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_acct_bad', undefined, 'acct_bad'), BreakerOpenError);
    assert.equal(refetcher.breakerState('stripe', 'acct_bad'), 'open');
    // More accounts than the clients kept: the closed ones make room, the open one stays.
    for (const account of ['acct_1', 'acct_2', 'acct_3'])
      assert.equal((await refetcher.fetchCharge('stripe', `ch_${account}`, undefined, account)).status, 'paid');
    assert.equal(refetcher.breakerState('stripe', 'acct_bad'), 'open', 'the open breaker was not dropped');
    assert.equal(refetcher.breakerState('stripe'), 'closed', "the provider's own reads are not held back");
    const badCalls = gateway.requests.filter((r) => r.headers['stripe-account'] === 'acct_bad').length;
    await assert.rejects(refetcher.fetchCharge('stripe', 'ch_acct_bad', undefined, 'acct_bad'), BreakerOpenError);
    assert.equal(gateway.requests.filter((r) => r.headers['stripe-account'] === 'acct_bad').length, badCalls, 'no call while its breaker is open');
  });

  test('the accounts whose breaker is not closed are counted per provider and state, one series per state, never per account', async () => {
    const registry = new Registry();
    const target = { ...connectTarget(), breaker: { consecutiveFailures: 2, halfOpenAfterMs: 50 } };
    const refetcher = createRefetcher({ targets: [target], clock: () => new Date(), metrics: declareRefetchMetrics([registry]) });
    const counted = async () => {
      const metric = await registry.getSingleMetric('inbox_refetch_account_breakers')!.get();
      return Object.fromEntries(metric.values.filter((v) => v.value !== 0).map((v) => [`${v.labels.provider} ${v.labels.state}`, v.value]));
    };
    flakyFails = true;
    for (const account of ['acct_bad', 'acct_flaky'])
      for (let i = 0; i < 2; i += 1) await assert.rejects(refetcher.fetchCharge('stripe', `ch_${account}`, undefined, account), GatewayUnavailableError);
    assert.equal((await refetcher.fetchCharge('stripe', 'ch_acct_1', undefined, 'acct_1')).status, 'paid');
    assert.deepEqual(await counted(), { 'stripe open': 2 }, 'two accounts open; the healthy one is not counted');
    // Past the half-open time, acct_flaky answers again: its trial closes its breaker.
    flakyFails = false;
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.equal((await refetcher.fetchCharge('stripe', 'ch_acct_flaky', undefined, 'acct_flaky')).status, 'paid');
    assert.deepEqual(await counted(), { 'stripe open': 1 });
    const series = (await registry.getSingleMetric('inbox_refetch_account_breakers')!.get()).values;
    assert.ok(
      series.every((v) => !('account' in v.labels)),
      'no series names an account',
    );
  });
});
