import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { stripeEventList } from '../../src/gateways/stripe/event-list.ts';
import { stripeApi } from '../../src/gateways/stripe/api.ts';
import { backfillEvents } from '../../src/operations/backfill.ts';
import { builtInDrivers } from '../../src/gateways/registry.ts';
import { createRefetcher } from '../../src/refetch/refetcher.ts';
import { type FakeGateway, startFakeGateway } from '../support/fake-gateway.ts';

// Found by a review: a backfill stopped by a long Retry-After said "the API answered 429" even for
// a call its own limiter held back unsent, and never what the gateway's answer said.

const KEY = 'sk_test_backfill_retry_after';
let gateway: FakeGateway;

before(async () => {
  gateway = await startFakeGateway();
});

after(async () => {
  await gateway?.close();
});

describe('backfill stopped by Retry-After', () => {
  test("a call held back by the run's own limiter says no call was sent, not that the gateway answered", async () => {
    // The gateway asks for 30 s (a backfill waits that out); the host's clock is then stepped back
    // 40 s while the run sleeps (NTP), so the refetcher still holds calls back for 70 s: too long.
    let nowMs = Date.parse('2026-03-01T12:00:00.000Z');
    const clock = () => new Date(nowMs);
    gateway.rules.push(() => ({ status: 429, headers: { 'retry-after': '30' }, json: { error: { type: 'rate_limit_error' } } }));
    const refetcher = createRefetcher({
      targets: [
        {
          provider: 'stripe',
          gateway: stripeApi,
          baseUrl: gateway.baseUrl,
          key: KEY,
          settings: {},
          ratePerSecond: 100,
          timeoutMs: 5000,
          breaker: { consecutiveFailures: 5, halfOpenAfterMs: 30_000 },
        },
      ],
      clock,
    });
    const notices: string[] = [];
    const stopped = await backfillEvents(
      {
        provider: 'stripe',
        driver: builtInDrivers.stripe!.create({ name: 'stripe', secrets: ['whsec_unused'], signatureToleranceSeconds: 300, options: {} }),
        list: stripeEventList,
        get: (path) => refetcher.get('stripe', path),
        ingest: () => assert.fail('no page was read, so nothing is stored'),
        findPresent: () => assert.fail('no page was read'),
        clock,
        sleep: async () => {
          nowMs -= 40_000;
        },
        notice: (text) => notices.push(text),
      },
      { since: new Date(nowMs - 3_600_000), dryRun: true },
    ).catch((error: unknown) => error as Error);

    assert.equal(gateway.requests.length, 1, 'one call reached the gateway');
    assert.ok(stopped instanceof Error);
    assert.match(stopped.message, /no call was sent: this run holds back calls to the stripe API until 2026-03-01T12:00:30\.000Z/);
    assert.match(stopped.message, /70 s from now, more than the 60 s a backfill waits: not before 2026-03-01T12:00:30\.000Z/);
    assert.doesNotMatch(stopped.message, /answered/);
    assert.match(notices[0]!, /the stripe API answered 429 \(\{"error":\{"type":"rate_limit_error"\}\}\); waiting 30 s/);
  });
});
