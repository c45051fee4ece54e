import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError } from '../../../src/errors.ts';
import { decidePaymentEvent, rejectedMoneyMovement } from '../../../src/domain/payments/event-decision.ts';
import { foldPaymentFacts } from '../../../src/domain/payments/fold.ts';
import { pagarmeDriver } from '../../../src/gateways/pagarme/webhook-driver.ts';
import type { ProviderDriver, StoredEvent } from '../../../src/gateways/shared/webhook-driver.ts';
import { type JwksServer, type TestSigningKey, generateSigningKey, startJwksServer } from '../jwks-server.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

// Pagar.me publishes no RS256 vectors: the signatures come from node:crypto with a key generated
// here, and the driver fetches its public half from a real JWKS server on loopback.
let server: JwksServer;
let current: TestSigningKey;
let next: TestSigningKey;

function hook(type = 'charge.paid', data: Record<string, unknown> = {}, createdAt = '2025-01-01T04:15:39Z') {
  return JSON.stringify({
    id: 'hook_4w1y0JVsPsn06EWx',
    account: { id: 'acc_Z5P8OoyFgOI9r84q', name: 'Loja Exemplo' },
    type,
    created_at: createdAt,
    data: {
      id: 'ch_GBnP26LF4FkyZvpm',
      code: 'WKDTXRSV7Q-01',
      amount: 150,
      paid_amount: 150,
      status: 'paid',
      currency: 'BRL',
      payment_method: 'credit_card',
      paid_at: '2025-01-01T04:15:39Z',
      customer: { id: 'cus_ADWMDOHxPiEbXLo4' },
      ...data,
    },
  });
}

function pagarme(options: Record<string, unknown> = {}, secrets: string[] = []): ProviderDriver {
  return createDriver(pagarmeDriver, { secrets, options: { jwksUrl: server.url, jwksCooldownSeconds: 0, ...options } });
}

before(async () => {
  current = generateSigningKey('key-2025');
  next = generateSigningKey('key-2026');
  server = await startJwksServer([current]);
});

after(async () => {
  await server?.close();
});

describe('pagarme v5: RS256 signatures with keys from the JWKS', () => {
  test('a body signed with the published key verifies; the JWKS is fetched once and cached', async () => {
    const driver = pagarme();
    const before = server.fetches;
    const body = hook();
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-asymmetric-signature': current.header(body) })), 'ok');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-asymmetric-signature': current.header(body) })), 'ok');
    assert.equal(server.fetches - before, 1);
  });

  test('signed by another key under the same kid → signature_mismatch', async () => {
    const impostor = generateSigningKey(current.kid);
    const body = hook();
    assert.equal(await verifyOutcome(pagarme(), webhookRequest(body, { 'x-webhook-asymmetric-signature': impostor.header(body) })), 'signature_mismatch');
  });

  test('one byte of the body changed → signature_mismatch', async () => {
    const body = hook();
    const request = webhookRequest(body.replace('"amount":150', '"amount":950'), { 'x-webhook-asymmetric-signature': current.header(body) });
    assert.equal(await verifyOutcome(pagarme(), request), 'signature_mismatch');
  });

  test('no header → signature_missing', async () => {
    assert.equal(await verifyOutcome(pagarme(), webhookRequest(hook())), 'signature_missing');
  });

  test('malformed headers, and an algorithm other than RS256 → signature_malformed', async () => {
    const valid = current.header(hook());
    for (const value of [
      'this-is-garbage',
      valid.replace('kid=key-2025; ', ''),
      valid.replace('alg=RS256', 'alg=HS256'),
      'alg=RS256; kid=k; signature=not base64url!',
    ]) {
      assert.equal(await verifyOutcome(pagarme(), webhookRequest(hook(), { 'x-webhook-asymmetric-signature': value })), 'signature_malformed', value);
    }
  });

  test('an unsupported algorithm is refused without repeating what was sent as one', async () => {
    const header = current.header(hook()).replace('alg=RS256', `alg=sentvalue${'x'.repeat(4_000)}`);
    await assert.rejects(
      async () => pagarme().verify(webhookRequest(hook(), { 'x-webhook-asymmetric-signature': header }), new Date()),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'signature_malformed');
        assert.ok(!error.message.includes('sentvalue'), error.message.slice(0, 120));
        return true;
      },
    );
  });

  test('padding and spacing in the header are tolerated', async () => {
    const body = hook();
    const header = `${current.header(body).replaceAll('; ', ';  ')}==`;
    assert.equal(await verifyOutcome(pagarme(), webhookRequest(body, { 'x-webhook-asymmetric-signature': header })), 'ok');
  });

  test('an unknown kid re-fetches the JWKS: a rotated-in key verifies', async () => {
    const driver = pagarme();
    const body = hook();
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-asymmetric-signature': current.header(body) })), 'ok');
    const fetchesBefore = server.fetches;
    server.keys = [current, next];
    try {
      assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-asymmetric-signature': next.header(body) })), 'ok');
      assert.equal(server.fetches - fetchesBefore, 1, 'one re-fetch for the unknown kid');
    } finally {
      server.keys = [current];
    }
  });

  test('a kid absent even after the re-fetch → signature_mismatch', async () => {
    const body = hook();
    const fetchesBefore = server.fetches;
    const header = current.header(body).replace(`kid=${current.kid}`, 'kid=never-published');
    assert.equal(await verifyOutcome(pagarme(), webhookRequest(body, { 'x-webhook-asymmetric-signature': header })), 'signature_mismatch');
    assert.equal(server.fetches - fetchesBefore, 2, 'the first fetch, then one re-fetch for the unknown kid');
  });

  test('within the cooldown, unknown kids do not trigger more fetches', async () => {
    const driver = pagarme({ jwksCooldownSeconds: 30 });
    const body = hook();
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-asymmetric-signature': current.header(body) })), 'ok');
    const fetchesBefore = server.fetches;
    for (const kid of ['forged-1', 'forged-2', 'forged-3']) {
      const header = current.header(body).replace(`kid=${current.kid}`, `kid=${kid}`);
      assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-asymmetric-signature': header })), 'signature_mismatch');
    }
    assert.equal(server.fetches, fetchesBefore);
  });

  test('a JWKS that cannot be fetched → 503 signing_keys_unavailable, not a 401', async () => {
    server.failWithStatus = 500;
    try {
      const body = hook();
      const driver = pagarme();
      await assert.rejects(
        async () => driver.verify(webhookRequest(body, { 'x-webhook-asymmetric-signature': current.header(body) }), new Date()),
        (error: unknown) => {
          assert.ok(error && typeof error === 'object' && 'status' in error && 'code' in error);
          assert.deepEqual([error.status, error.code], [503, 'signing_keys_unavailable']);
          return true;
        },
      );
    } finally {
      server.failWithStatus = undefined;
    }
  });

  test('optional Basic Auth: required when configured', async () => {
    const driver = pagarme({}, ['inbox:s3cret']);
    const body = hook();
    const signed = { 'x-webhook-asymmetric-signature': current.header(body) };
    const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { ...signed, authorization: basic('inbox:s3cret') })), 'ok');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { ...signed, authorization: basic('inbox:wrong') })), 'signature_mismatch');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, signed)), 'signature_missing');
  });

  test('options: a non-https JWKS URL and bad numbers are listed together', () => {
    assert.throws(
      () => createDriver(pagarmeDriver, { options: { jwksUrl: 'http://keys.example.com/jwks.json', jwksTimeoutMs: -1 } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 2);
        assert.match(error.problems.join('\n'), /jwksUrl: must be https/);
        return true;
      },
    );
  });
});

describe('pagarme v5: parsing and facts', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const driver = createDriver(pagarmeDriver, { options: { jwksUrl: 'https://127.0.0.1/unused' } });
  const stored = (body: string): StoredEvent => ({ provider: 'pagarme', ...driver.parse(webhookRequest(body), now), payloadLossy: false });

  test('hook id, type, data.id, created_at', () => {
    const event = driver.parse(webhookRequest(hook()), now);
    assert.deepEqual(
      [event.eventId, event.eventType, event.resourceId, event.occurredAt.toISOString()],
      ['hook_4w1y0JVsPsn06EWx', 'charge.paid', 'ch_GBnP26LF4FkyZvpm', '2025-01-01T04:15:39.000Z'],
    );
  });

  test('created_at is parsed leniently: 7 fractional digits, offsets', () => {
    assert.equal(
      driver.parse(webhookRequest(hook('charge.paid', {}, '2025-01-01T04:15:39.1234567Z')), now).occurredAt.toISOString(),
      '2025-01-01T04:15:39.123Z',
    );
    assert.equal(
      driver.parse(webhookRequest(hook('charge.paid', {}, '2025-01-01T01:15:39.5-03:00')), now).occurredAt.toISOString(),
      '2025-01-01T04:15:39.500Z',
    );
    assert.equal(
      errorCode(() => driver.parse(webhookRequest(hook('charge.paid', {}, 'yesterday')), now)),
      'malformed_payload',
    );
  });

  test('charge.paid → paid, integer centavos', () => {
    assert.deepEqual(driver.toPaymentFact(stored(hook())), {
      kind: 'payment.paid',
      chargeId: 'ch_GBnP26LF4FkyZvpm',
      status: 'paid',
      occurredAt: new Date('2025-01-01T04:15:39Z'),
      amount: 150,
      amountRefunded: undefined,
      currency: 'BRL',
    });
  });

  test('every mapped charge event', () => {
    const status = (type: string, data: Record<string, unknown> = {}) => driver.toPaymentFact(stored(hook(type, data)))?.status ?? null;
    assert.equal(status('charge.pending'), 'pending');
    assert.equal(status('charge.payment_failed'), 'failed');
    assert.equal(status('charge.antifraud_reproved'), 'failed');
    assert.equal(status('charge.refunded', { status: 'canceled', canceled_amount: 150 }), 'refunded');
    assert.equal(status('charge.refunded', { status: 'canceled', paid_amount: 0, paid_at: null }), 'canceled');
    assert.equal(status('charge.partial_canceled', { canceled_amount: 50 }), 'partially_refunded');
    assert.equal(status('charge.chargedback'), 'charged_back');
    assert.equal(status('charge.underpaid'), null);
    assert.equal(status('order.paid', { id: 'or_0p865QKCACM3O1ay' }), null);
    assert.equal(driver.toPaymentFact(stored(hook('charge.partial_canceled', { canceled_amount: 50 })))?.amountRefunded, 50);
  });

  // The shape Pagar.me sends for a cancellation (the charge.refunded hook_oVYMA2OfafX3ZK4W of a
  // Magento store, published 2025-01): status canceled, canceled_amount and canceled_at, and fields
  // that are zero or null left out — no paid_amount, no paid_at, as a paid charge has no
  // canceled_amount. What the last transaction says (pagarme/ecommerce-module-core
  // TransactionStatus) is whether money had been taken: refunded is an estorno, voided a released hold.
  function cancellation(lastTransaction: Record<string, unknown>, canceledAmount = 21734): string {
    return JSON.stringify({
      id: 'hook_oVYMA2OfafX3ZK4W',
      account: { id: 'acc_Z5P8OoyFgOI9r84q', name: 'Digital Hub (Conta 3) - test' },
      type: canceledAmount < 21734 ? 'charge.partial_canceled' : 'charge.refunded',
      created_at: '2025-01-06T18:43:27Z',
      data: {
        id: 'ch_0ZK4qDViEiz7WMbg',
        code: '000000058',
        gateway_id: '2208039462',
        amount: 21734,
        canceled_amount: canceledAmount,
        status: canceledAmount < 21734 ? 'paid' : 'canceled',
        currency: 'BRL',
        payment_method: 'credit_card',
        canceled_at: '2025-01-06T18:43:27Z',
        created_at: '2025-01-06T18:38:33Z',
        updated_at: '2025-01-06T18:43:27Z',
        order: { id: 'or_zoqmnG7UyUDnV5g0', code: '000000058', amount: 21734, closed: true, status: 'canceled', customer_id: 'cus_EmY3x9IxrhbbK0A4' },
        customer: { id: 'cus_EmY3x9IxrhbbK0A4', name: 'Rafael Teste' },
        last_transaction: {
          id: 'tran_Bq7Lw0pUkzsgJ6Ex',
          transaction_type: 'credit_card',
          gateway_id: '2208039462',
          amount: canceledAmount,
          success: true,
          ...lastTransaction,
        },
      },
    });
  }

  test('a paid charge refunded, as Pagar.me sends it (no paid_amount, no paid_at) → refunded, its canceled_amount returned', () => {
    const fact = driver.toPaymentFact(stored(cancellation({ status: 'refunded' })));
    assert.deepEqual([fact?.kind, fact?.status, fact?.amount, fact?.amountRefunded], ['payment.refunded', 'refunded', 21734, 21734]);
    const partial = driver.toPaymentFact(stored(cancellation({ status: 'partial_refunded' }, 5000)));
    assert.deepEqual([partial?.status, partial?.amountRefunded], ['partially_refunded', 5000]);
  });

  test('the same shape for a hold released or a charge never paid → canceled, nothing refunded', () => {
    for (const status of ['voided', 'partial_void', 'expired', 'generated', 'waiting_payment', 'not_authorized']) {
      const fact = driver.toPaymentFact(stored(cancellation({ status })));
      assert.deepEqual([fact?.status, fact?.amountRefunded], ['canceled', undefined], status);
    }
  });

  test('a partial void of an auth-only charge (never paid) is still an authorization, not a partial refund', () => {
    const partlyVoided = {
      status: 'pending',
      paid_amount: 0,
      paid_at: null,
      canceled_amount: 50,
      last_transaction: { id: 'tran_held', transaction_type: 'credit_card', status: 'partial_void' },
    };
    const fact = driver.toPaymentFact(stored(hook('charge.partial_canceled', partlyVoided)));
    assert.deepEqual([fact?.status, fact?.amountRefunded], ['authorized', undefined]);
    // Folded after the authorization it is nothing new: no refused money movement.
    const held = driver.toPaymentFact(
      stored(
        hook(
          'charge.pending',
          { ...partlyVoided, canceled_amount: undefined, last_transaction: { id: 'tran_held', status: 'authorized_pending_capture' } },
          '2025-01-01T04:00:00Z',
        ),
      ),
    )!;
    const fold = foldPaymentFacts(null, [
      { inboxId: 1, fact: held },
      { inboxId: 2, fact: fact! },
    ]);
    assert.deepEqual([fold.state?.status, fold.refused.size], ['authorized', 1]);
    const decision = decidePaymentEvent({
      event: { inboxId: 2, fact: fact! },
      before: foldPaymentFacts(null, [{ inboxId: 1, fact: held }]).state,
      after: fold.state,
      fold,
    });
    assert.deepEqual([decision.decision, rejectedMoneyMovement(decision)], ['stale', undefined]);
  });

  test('an overpaid boleto refunded in full: the payment is what was paid, so the refund of all of it is refunded, not an impossible amount', () => {
    const boleto = { amount: 1000, payment_method: 'boleto', paid_at: '2025-01-02T10:00:00Z' };
    const overpaid = driver.toPaymentFact(stored(hook('charge.overpaid', { ...boleto, status: 'overpaid', paid_amount: 1050 }, '2025-01-02T10:00:00Z')))!;
    // Pagar.me leaves paid_amount out of the cancellation (the refunded charge it publishes has none).
    const refunded = driver.toPaymentFact(
      stored(
        hook(
          'charge.refunded',
          { ...boleto, status: 'canceled', paid_amount: undefined, canceled_amount: 1050, last_transaction: { id: 'tran_boleto', status: 'refunded' } },
          '2025-01-05T10:00:00Z',
        ),
      ),
    )!;
    assert.deepEqual([overpaid.status, overpaid.amount], ['paid', 1050]);
    assert.deepEqual([refunded.status, refunded.amount, refunded.amountRefunded], ['refunded', 1050, 1050]);
    const fold = foldPaymentFacts(null, [
      { inboxId: 1, fact: overpaid },
      { inboxId: 2, fact: refunded },
    ]);
    assert.deepEqual([fold.state?.status, fold.state?.amount, fold.state?.amountRefunded, fold.refused.size], ['refunded', 1050, 1050, 0]);
  });

  test('an auth-only card charge: charge.pending whose last transaction is authorized_pending_capture → authorized; its void → canceled', () => {
    const status = (type: string, data: Record<string, unknown>) => driver.toPaymentFact(stored(hook(type, data)))?.status ?? null;
    const held = {
      status: 'pending',
      paid_amount: 0,
      paid_at: null,
      last_transaction: { id: 'tran_held', transaction_type: 'credit_card', status: 'authorized_pending_capture' },
    };
    assert.equal(status('charge.pending', held), 'authorized');
    assert.equal(status('charge.pending', { ...held, last_transaction: { id: 'tran_boleto', transaction_type: 'boleto', status: 'generated' } }), 'pending');
    assert.equal(status('charge.refunded', { ...held, status: 'canceled', last_transaction: { id: 'tran_void', status: 'voided' } }), 'canceled');
  });
});
