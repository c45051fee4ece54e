/**
 * A refused signature says which part of it is wrong. Each case starts from a request an
 * independent signer made (the Stripe SDK, the standardwebhooks package, node:crypto's HMAC and
 * RSA, Mercado Pago's documented algorithm), checks it verifies, then spoils one part: the answer
 * names that part, and never blames a part that is there (`t=…,v1=bad` was once answered "has no
 * t= timestamp or no v1= signature").
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { SignatureError } from '../../src/errors.ts';
import { githubDriver } from '../../src/gateways/github/webhook-driver.ts';
import { hmacDriver } from '../../src/gateways/hmac/webhook-driver.ts';
import { mercadoPagoDriver } from '../../src/gateways/mercadopago/webhook-driver.ts';
import { pagarmeDriver } from '../../src/gateways/pagarme/webhook-driver.ts';
import type { ProviderDriver, WebhookRequest } from '../../src/gateways/shared/webhook-driver.ts';
import { shopifyDriver } from '../../src/gateways/shopify/webhook-driver.ts';
import { standardWebhooksDriver } from '../../src/gateways/standard-webhooks/webhook-driver.ts';
import { stripeDriver } from '../../src/gateways/stripe/webhook-driver.ts';
import { generateSigningKey } from './jwks-server.ts';
import { createDriver, webhookRequest } from './request.ts';

// A whole second, so the skew the tolerance message reports is exact.
const now = new Date(Math.floor(Date.now() / 1000) * 1000);
const nowSeconds = Math.floor(now.getTime() / 1000);

/** The SignatureError verify throws, as `code: message`; 'ok' when it verifies. */
async function refusal(driver: ProviderDriver, request: WebhookRequest): Promise<string> {
  try {
    await driver.verify(request, now);
    return 'ok';
  } catch (error) {
    if (error instanceof SignatureError) return `${error.code}: ${error.message}`;
    throw error;
  }
}

describe('stripe (signed by the official SDK)', () => {
  const secret = 'whsec_signature_messages';
  const driver = createDriver(stripeDriver, { secrets: [secret] });
  const body = JSON.stringify({
    id: 'evt_msg_1',
    object: 'event',
    type: 'charge.succeeded',
    created: nowSeconds,
    data: { object: { id: 'ch_1', object: 'charge' } },
  });
  const header = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret, timestamp: nowSeconds });
  const v1 = /v1=([0-9a-f]+)/.exec(header)![1]!;
  const withHeader = (value: string) => webhookRequest(body, { 'stripe-signature': value });

  test('as signed, it verifies', async () => {
    assert.equal(await refusal(driver, withHeader(header)), 'ok');
  });
  test('t=…,v1=bad: the v1= is not 64 hex digits, and nothing about t=', async () => {
    const answer = await refusal(driver, withHeader(`t=${nowSeconds},v1=bad`));
    assert.match(answer, /^signature_malformed: .*a v1= that is not an HMAC-SHA256 in hex \(64 hex digits\)/);
    assert.doesNotMatch(answer, /no t=/);
  });
  test('no t=: the timestamp is missing', async () => {
    assert.match(await refusal(driver, withHeader(`v1=${v1}`)), /^signature_malformed: The Stripe-Signature header has no t= timestamp/);
  });
  test('t=yesterday: the t= is not a unix timestamp', async () => {
    assert.match(await refusal(driver, withHeader(`t=yesterday,v1=${v1}`)), /^signature_malformed: .*a t= that is not a unix timestamp/);
  });
  test('only a v0=: no v1= signature', async () => {
    assert.match(await refusal(driver, withHeader(`t=${nowSeconds},v0=${v1}`)), /^signature_malformed: .*has no v1= signature/);
  });
  test('a v1= of 64 hex digits that is not the signature: a mismatch, not malformed', async () => {
    assert.match(await refusal(driver, withHeader(`t=${nowSeconds},v1=${'0'.repeat(64)}`)), /^signature_mismatch: /);
  });
  test('signed an hour ago: the timestamp, with the skew', async () => {
    const old = new Stripe('sk_test_unused').webhooks.generateTestHeaderString({ payload: body, secret, timestamp: nowSeconds - 3600 });
    assert.match(await refusal(driver, withHeader(old)), /^timestamp_outside_tolerance: The signed timestamp is 3600 s away/);
  });
});

describe('standard webhooks (signed by the standardwebhooks package)', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const driver = createDriver(standardWebhooksDriver, { secrets: [secret] });
  const body = '{"type":"payment.paid"}';
  const signature = new Webhook(secret).sign('msg_1', now, body);
  const withSignature = (value: string, timestamp = String(nowSeconds)) =>
    webhookRequest(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': timestamp, 'webhook-signature': value });

  test('as signed, it verifies', async () => {
    assert.equal(await refusal(driver, withSignature(signature)), 'ok');
  });
  test('v1,bad: the v1 signature is not a base64 HMAC-SHA256', async () => {
    assert.match(await refusal(driver, withSignature('v1,bad')), /^signature_malformed: .*v1 signature is not an HMAC-SHA256 in base64/);
  });
  test('no <version>,<signature> pair at all', async () => {
    assert.match(await refusal(driver, withSignature('garbage')), /^signature_malformed: .*not a space-separated list of <version>,<base64>/);
  });
  test('a timestamp that is not unix seconds', async () => {
    assert.match(await refusal(driver, withSignature(signature, 'yesterday')), /^signature_malformed: The webhook-timestamp header is not an integer/);
  });
  test('only a v2 signature: no v1', async () => {
    assert.match(await refusal(driver, withSignature(signature.replace('v1,', 'v2,'))), /^signature_mismatch: .*no v1 \(HMAC-SHA256\) signature/);
  });
});

describe('mercado pago (its documented algorithm, HMAC-SHA256 by node:crypto)', () => {
  const secret = 'mp-signature-messages';
  const driver = createDriver(mercadoPagoDriver, { secrets: [secret] });
  const body = JSON.stringify({ action: 'payment.updated', type: 'payment', data: { id: '123456' }, date_created: now.toISOString(), id: 1 });
  const v1 = createHmac('sha256', secret).update(`id:123456;request-id:req-1;ts:${nowSeconds};`).digest('hex');
  const withSignature = (value: string) => webhookRequest(body, { 'x-signature': value, 'x-request-id': 'req-1' }, 'data.id=123456&type=payment');

  test('as signed, it verifies', async () => {
    assert.equal(await refusal(driver, withSignature(`ts=${nowSeconds},v1=${v1}`)), 'ok');
  });
  for (const [value, part] of [
    [`v1=${v1}`, /has no ts= timestamp/],
    [`ts=soon,v1=${v1}`, /has a ts= that is not a unix timestamp/],
    [`ts=${nowSeconds}`, /has no v1= signature/],
    [`ts=${nowSeconds},v1=bad`, /has a v1= that is not an HMAC-SHA256 in hex/],
  ] as const) {
    test(`${value.slice(0, 24)}…: ${part.source}`, async () => {
      assert.match(await refusal(driver, withSignature(value)), new RegExp(`^signature_malformed: The x-signature header ${part.source}`));
    });
  }
});

describe('pagar.me v5 (RS256 by node:crypto)', () => {
  const key = generateSigningKey('key-messages');
  // The header is read before any key is fetched: no JWKS server is needed to refuse it.
  const driver = createDriver(pagarmeDriver, { options: { jwksUrl: 'http://127.0.0.1:9/unused' } });
  const body = '{"id":"hook_1","type":"charge.paid"}';
  const signature = /signature=(\S+)/.exec(key.header(body))![1]!;
  const withHeader = (value: string) => webhookRequest(body, { 'x-webhook-asymmetric-signature': value });

  for (const [value, part] of [
    [`kid=${key.kid}; signature=${signature}`, /has no alg=/],
    [`alg=RS256; signature=${signature}`, /has no kid=/],
    [`alg=RS256; kid=${key.kid}`, /has no signature=/],
    [`alg=RS256; kid=${key.kid}; signature=not*base64url`, /has a signature= that is not base64url/],
  ] as const) {
    test(`${part.source}`, async () => {
      assert.match(await refusal(driver, withHeader(value)), new RegExp(`^signature_malformed: The X-Webhook-Asymmetric-Signature header ${part.source}`));
    });
  }
  test('alg=HS256: the algorithm', async () => {
    assert.match(
      await refusal(driver, withHeader(`alg=HS256; kid=${key.kid}; signature=${signature}`)),
      /^signature_malformed: Unsupported signature algorithm \(alg=\)/,
    );
  });
});

describe('HMAC headers: GitHub, Shopify, the generic driver (HMAC by node:crypto)', () => {
  const body = '{"action":"opened"}';
  const hex = (secret: string) => createHmac('sha256', secret).update(body).digest('hex');

  test('github: as signed it verifies; without sha256= the prefix is named; a short digest its length', async () => {
    const driver = createDriver(githubDriver, { secrets: ['gh-secret'] });
    const request = (value: string) => webhookRequest(body, { 'x-hub-signature-256': value, 'x-github-event': 'issues', 'x-github-delivery': 'd-1' });
    assert.equal(await refusal(driver, request(`sha256=${hex('gh-secret')}`)), 'ok');
    assert.match(await refusal(driver, request(hex('gh-secret'))), /^signature_malformed: The x-hub-signature-256 header does not start with "sha256="/);
    assert.match(
      await refusal(driver, request('sha256=abc')),
      /^signature_malformed: The x-hub-signature-256 header's digest is not an HMAC-SHA256 in hex \(64 hex digits\)/,
    );
  });

  test('shopify: as signed it verifies; a hex digest where base64 is expected names the encoding and length', async () => {
    const driver = createDriver(shopifyDriver, { secrets: ['shop-secret'] });
    const request = (value: string) =>
      webhookRequest(body, { 'x-shopify-hmac-sha256': value, 'x-shopify-topic': 'orders/paid', 'x-shopify-webhook-id': 'w-1' });
    assert.equal(await refusal(driver, request(createHmac('sha256', 'shop-secret').update(body).digest('base64'))), 'ok');
    assert.match(await refusal(driver, request(hex('shop-secret'))), /^signature_malformed: .*digest is not an HMAC-SHA256 in base64 \(32 bytes\)/);
  });

  test('generic hmac with a timestamp header: a timestamp that is not one is named, not the signature', async () => {
    const driver = createDriver(hmacDriver, {
      secrets: ['generic'],
      options: { header: 'x-signature', prefix: 'sha256=', typePath: 'action', timestampHeader: 'x-timestamp' },
    });
    const signed = createHmac('sha256', 'generic').update(`${nowSeconds}.${body}`).digest('hex');
    const request = (timestamp: string) => webhookRequest(body, { 'x-signature': `sha256=${signed}`, 'x-timestamp': timestamp });
    assert.equal(await refusal(driver, request(String(nowSeconds))), 'ok');
    assert.match(await refusal(driver, request('yesterday')), /^signature_malformed: The x-timestamp header is not a unix timestamp/);
  });
});
