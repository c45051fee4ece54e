import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PaymentNotYetKnown } from '../../src/domain/payments/errors.ts';
import { describeError } from '../../src/errors.ts';
import { BreakerOpenError, GatewayRejectedError, GatewayUnavailableError } from '../../src/refetch/errors.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows, minutesAgo } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let env: Record<string, string>;

// last_error as processing records it: describeError of what the handler threw (process-batch.ts).
const stripeCharges = [
  'ch_3PqXyZ2eZvKYlo2C1a2b3c4d',
  'ch_3PqXzA2eZvKYlo2C0b1c2d3e',
  'ch_3PqY0B2eZvKYlo2C9f8e7d6c',
  'ch_3PqY1C2eZvKYlo2C5a4b3c2d',
  'ch_3PqY2D2eZvKYlo2C7e6f5a4b',
];
const failures: Array<{ provider: string; error: Error }> = [
  ...stripeCharges.map((charge) => ({ provider: 'stripe', error: new PaymentNotYetKnown('stripe', charge) })),
  ...[
    ['ch_3PqXyZ2eZvKYlo2C1a2b3c4d', 'req_8f3kLm2Pq9'],
    ['ch_3PqY0B2eZvKYlo2C9f8e7d6c', 'req_Zx81aQ0w'],
    ['ch_3PqY1C2eZvKYlo2C5a4b3c2d', 'req_0pL3mN5b'],
  ].map(([charge, request]) => ({
    provider: 'stripe',
    error: new GatewayUnavailableError(
      'stripe',
      `GET https://api.stripe.com/v1/charges/${charge} answered 503: {"error":{"message":"Service unavailable","request_id":"${request}"}}.`,
      { status: 503 },
    ),
  })),
  ...['2026-12-02T14:05:00.000Z', '2026-12-02T14:35:30.250Z'].map((at) => ({ provider: 'stripe', error: new BreakerOpenError('stripe', new Date(at)) })),
  ...['amount', 'currency'].map((property) => ({ provider: 'stripe', error: new TypeError(`Cannot read properties of undefined (reading '${property}')`) })),
  ...['pay_080225913252', 'pay_4k2x9q1m7z3w8e5r'].map((payment) => ({ provider: 'asaas', error: new PaymentNotYetKnown('asaas', payment) })),
  ...['1319971938', '1319971941'].map((payment) => ({ provider: 'mercadopago', error: new PaymentNotYetKnown('mercadopago', payment) })),
  ...['2a6f1e8c-9b3d-4c5e-8f7a-1b2c3d4e5f60', 'f47ac10b-58cc-4372-a567-0e02b2c3d479'].map((transaction) => ({
    provider: 'zoop',
    error: new GatewayRejectedError(
      'zoop',
      `GET https://api.zoop.ws/v1/marketplaces/3249465a7753536b8a8c6e3d2f0f8a61/transactions/${transaction} answered 404; no such resource there: is api.baseUrl the right environment?`,
      { status: 404 },
    ),
  })),
];

let ids: number[];
setup(async () => {
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_top_errors' };
  ids = await insertInboxRows(
    database.sql,
    failures.map(({ provider, error }, i) => ({
      provider,
      eventId: `evt_fail_${i}`,
      status: 'failed' as const,
      attempts: 10,
      lastError: describeError(error),
      receivedAt: minutesAgo(60 - i),
    })),
  );
});

const statsOf = async (provider: string) => {
  const run = await runInboxctl(['stats', '--provider', provider, '--json'], env);
  assert.equal(run.code, 1, run.stderr);
  return run.json();
};

/** The newest row (highest inbox id) whose error contains `text`: the example a group shows. */
const newest = (provider: string, text: string) => {
  const i = failures.findLastIndex((f) => f.provider === provider && describeError(f.error).includes(text));
  return { id: ids[i], eventId: `evt_fail_${i}`, error: describeError(failures[i]!.error) };
};

describe('stats groups failures by the shape of their error', () => {
  test('one line per shape: ids, numbers, times and quoted values replaced, with the newest example', async () => {
    const stats = await statsOf('stripe');
    assert.equal(stats.failed, 12);
    assert.deepEqual(stats.topErrors, [
      {
        provider: 'stripe',
        error:
          'PaymentNotYetKnown: No payment for stripe charge <id> yet. This provider is in "…" mode: the application must create the payments row (provider, gateway_charge_id); the event is retried until it does.',
        count: 5,
        example: newest('stripe', stripeCharges[4]!),
      },
      {
        provider: 'stripe',
        error: 'GatewayUnavailableError: GET https://api.stripe.com/v1/charges/<id> answered <n>: {"…":{"…":"…","…":"…"}}.',
        count: 3,
        example: newest('stripe', 'req_0pL3mN5b'),
      },
      {
        provider: 'stripe',
        error:
          'BreakerOpenError: The stripe API circuit breaker is open after repeated failures; no call is sent before <time>, when one trial call decides whether it closes.',
        count: 2,
        example: newest('stripe', '14:35:30'),
      },
      { provider: 'stripe', error: "TypeError: Cannot read properties of undefined (reading '…')", count: 2, example: newest('stripe', 'currency') },
    ]);
  });

  test('numeric ids and uuids are ids too; each provider groups apart', async () => {
    assert.deepEqual(
      (await statsOf('mercadopago')).topErrors.map((e: any) => [e.error.slice(0, 53), e.count]),
      [['PaymentNotYetKnown: No payment for mercadopago charge', 2]],
    );
    assert.match((await statsOf('mercadopago')).topErrors[0].error, /charge <n> yet/);
    const zoop = (await statsOf('zoop')).topErrors;
    assert.deepEqual(
      zoop.map((e: any) => [e.error, e.count]),
      [
        [
          'GatewayRejectedError: GET https://api.zoop.ws/v1/marketplaces/<id>/transactions/<uuid> answered <n>; no such resource there: is api.baseUrl the right environment?',
          2,
        ],
      ],
    );
    assert.deepEqual(
      (await statsOf('asaas')).topErrors.map((e: any) => e.count),
      [2],
    );
  });

  test('the text output shows each shape once with its example, and the top five over all providers', async () => {
    const run = await runInboxctl(['stats'], env);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.out, /^Failed: 18\.$/m);
    const example = newest('stripe', stripeCharges[4]!);
    assert.match(run.out, /^ {7}5× stripe: PaymentNotYetKnown: No payment for stripe charge <id> yet\. /m);
    assert.ok(
      run.out.includes(`e.g. inbox id ${example.id} (stripe ${example.eventId}): PaymentNotYetKnown: No payment for stripe charge ${stripeCharges[4]} yet.`),
      run.out,
    );
    assert.equal(run.out.match(/^ +\d+× /gm)?.length, 5, 'five shapes listed');
  });
});
