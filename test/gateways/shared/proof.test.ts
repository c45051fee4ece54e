import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { asaasDriver } from '../../../src/gateways/asaas/webhook-driver.ts';
import { hmacDriver } from '../../../src/gateways/hmac/webhook-driver.ts';
import { mercadoPagoDriver } from '../../../src/gateways/mercadopago/webhook-driver.ts';
import { pagarmeDriver } from '../../../src/gateways/pagarme/webhook-driver.ts';
import { type WebhookRequestProof, verificationProofSchema } from '../../../src/gateways/shared/proof.ts';
import { standardWebhooksDriver } from '../../../src/gateways/standard-webhooks/webhook-driver.ts';
import { stripeDriver } from '../../../src/gateways/stripe/webhook-driver.ts';
import type { ProviderDriver, WebhookRequest } from '../../../src/gateways/shared/webhook-driver.ts';
import { stripeSignature } from '../../support/stripe.ts';
import { type JwksServer, type TestSigningKey, generateSigningKey, startJwksServer } from '../jwks-server.ts';
import { createDriver, webhookRequest } from '../request.ts';

// Every driver's proof, and the same check run again after a rotation, with signatures made by
// independent signers (the stripe SDK, the standardwebhooks library, node:crypto).
const A = 'whsec_unit_proof_A_0123456789';
const B = 'whsec_unit_proof_B_9876543210';
const DAY_MS = 86_400_000;
const tenDaysAgo = new Date(Math.floor((Date.now() - 10 * DAY_MS) / 1000) * 1000);

async function proofOf(driver: ProviderDriver, request: WebhookRequest, now: Date): Promise<WebhookRequestProof> {
  return verificationProofSchema.parse(JSON.parse(JSON.stringify(await driver.verify(request, now)))) as WebhookRequestProof;
}

/** What `inboxctl verify` says of a delivery stored then, with the driver as configured now. */
async function checkedAgain(driver: ProviderDriver, request: WebhookRequest, proof: WebhookRequestProof) {
  const result = await driver.reverify({ rawBody: request.rawBody, proof });
  return result.outcome === 'matches' ? { outcome: result.outcome, position: result.secret?.position ?? null, by: result.by } : { outcome: result.outcome };
}

describe('stripe-v1', () => {
  const body = JSON.stringify({ id: 'evt_unit', object: 'event', type: 'charge.succeeded', created: 1, data: { object: { id: 'ch_unit' } } });
  const request = webhookRequest(body, { 'stripe-signature': stripeSignature(body, A, tenDaysAgo.getTime() / 1000) });

  test('the position and fingerprint of the matching secret, the signed time; the fingerprint is not the secret', async () => {
    const proof = await proofOf(createDriver(stripeDriver, { secrets: [B, A] }), request, tenDaysAgo);
    assert.equal(proof.scheme, 'stripe-v1');
    assert.ok(proof.scheme === 'stripe-v1' && proof.secret.position === 2 && proof.signedAt === tenDaysAgo.toISOString());
    const onlyA = await proofOf(createDriver(stripeDriver, { secrets: [A] }), request, tenDaysAgo);
    assert.ok('secret' in onlyA && 'secret' in proof && onlyA.secret!.fingerprint === proof.secret!.fingerprint, 'a secret has one fingerprint');
    assert.doesNotMatch(JSON.stringify(proof), /unit_proof_A/);
  });

  test('checked again ten days later: A → 1, B → none, B,A → 2 (the tolerance is measured at the signed time)', async () => {
    const proof = await proofOf(createDriver(stripeDriver, { secrets: [A] }), request, tenDaysAgo);
    assert.deepEqual(await checkedAgain(createDriver(stripeDriver, { secrets: [A] }), request, proof), { outcome: 'matches', position: 1, by: 'signature' });
    assert.deepEqual(await checkedAgain(createDriver(stripeDriver, { secrets: [B] }), request, proof), { outcome: 'no_match' });
    assert.deepEqual(await checkedAgain(createDriver(stripeDriver, { secrets: [B, A] }), request, proof), { outcome: 'matches', position: 2, by: 'signature' });
  });

  test('a stored signature header that was tampered with does not verify', async () => {
    const proof = await proofOf(createDriver(stripeDriver, { secrets: [A] }), request, tenDaysAgo);
    assert.ok(proof.scheme === 'stripe-v1');
    const moved = {
      ...proof,
      signed: { headers: { 'stripe-signature': proof.signed.headers['stripe-signature']!.replace(/^t=\d+/, `t=${Math.floor(Date.now() / 1000)}`) } },
    };
    assert.deepEqual(await checkedAgain(createDriver(stripeDriver, { secrets: [A] }), request, moved), { outcome: 'no_match' });
  });
});

describe('standard-webhooks', () => {
  const OLD = `whsec_${Buffer.from('unit standard webhooks old key').toString('base64')}`;
  const NEW = `whsec_${Buffer.from('unit standard webhooks new key').toString('base64')}`;

  test('signed with the old key ten days ago: position 1 then, 2 after "new,old", none after "new"', async () => {
    const body = JSON.stringify({ type: 'x.created', data: { id: 'x_1' } });
    const request = webhookRequest(body, {
      'webhook-id': 'msg_unit',
      'webhook-timestamp': String(tenDaysAgo.getTime() / 1000),
      'webhook-signature': new Webhook(OLD).sign('msg_unit', tenDaysAgo, body),
    });
    const proof = await proofOf(createDriver(standardWebhooksDriver, { secrets: [OLD] }), request, tenDaysAgo);
    assert.ok(proof.scheme === 'standard-webhooks' && proof.secret.position === 1 && proof.signedAt === tenDaysAgo.toISOString());
    assert.deepEqual(await checkedAgain(createDriver(standardWebhooksDriver, { secrets: [NEW, OLD] }), request, proof), {
      outcome: 'matches',
      position: 2,
      by: 'signature',
    });
    assert.deepEqual(await checkedAgain(createDriver(standardWebhooksDriver, { secrets: [NEW] }), request, proof), { outcome: 'no_match' });
  });
});

describe('hmac with a timestamp header, and mercadopago', () => {
  test('hmac-sha256: signedAt from the timestamp header, checked again later', async () => {
    const options = { header: 'x-signature', timestampHeader: 'x-timestamp', typePath: 'type' };
    const body = '{"type":"a.b","id":"1"}';
    const ts = String(tenDaysAgo.getTime() / 1000);
    const request = webhookRequest(body, { 'x-signature': createHmac('sha256', A).update(`${ts}.${body}`).digest('hex'), 'x-timestamp': ts });
    const proof = await proofOf(createDriver(hmacDriver, { secrets: [A], options }), request, tenDaysAgo);
    assert.ok(proof.scheme === 'hmac-sha256' && proof.signedAt === tenDaysAgo.toISOString());
    assert.deepEqual(await checkedAgain(createDriver(hmacDriver, { secrets: [B, A], options }), request, proof), {
      outcome: 'matches',
      position: 2,
      by: 'signature',
    });
  });

  test('mercadopago: the signed query data.id and x-request-id are kept; the second secret matches', async () => {
    const ts = String(tenDaysAgo.getTime());
    const manifest = `id:123456;request-id:req-unit;ts:${ts};`;
    const request = webhookRequest(
      '{"id":12345,"action":"payment.updated","data":{"id":"123456"}}',
      {
        'x-signature': `ts=${ts},v1=${createHmac('sha256', A).update(manifest).digest('hex')}`,
        'x-request-id': 'req-unit',
      },
      'data.id=123456&type=payment',
    );
    const proof = await proofOf(createDriver(mercadoPagoDriver, { secrets: [B, A] }), request, tenDaysAgo);
    assert.ok(proof.scheme === 'mercadopago' && proof.secret.position === 2);
    assert.deepEqual(proof.signed, { headers: { 'x-signature': request.header('x-signature'), 'x-request-id': 'req-unit' }, query: { 'data.id': '123456' } });
    assert.deepEqual(await checkedAgain(createDriver(mercadoPagoDriver, { secrets: [A] }), request, proof), {
      outcome: 'matches',
      position: 1,
      by: 'signature',
    });
    assert.deepEqual(await checkedAgain(createDriver(mercadoPagoDriver, { secrets: [B] }), request, proof), { outcome: 'no_match' });
  });
});

describe('token schemes and pagarme', () => {
  let server: JwksServer;
  let key: TestSigningKey;
  before(async () => {
    key = generateSigningKey('unit-kid');
    server = await startJwksServer([key]);
  });
  after(async () => server?.close());

  test('asaas: the token is never in the proof; checked again by its fingerprint', async () => {
    const request = webhookRequest('{}', { 'asaas-access-token': 'asaas-unit-token-old' });
    const proof = await proofOf(createDriver(asaasDriver, { secrets: ['asaas-unit-token-old'] }), request, new Date());
    assert.doesNotMatch(JSON.stringify(proof), /asaas-unit-token/);
    assert.deepEqual(await checkedAgain(createDriver(asaasDriver, { secrets: ['asaas-unit-token-new', 'asaas-unit-token-old'] }), request, proof), {
      outcome: 'matches',
      position: 2,
      by: 'fingerprint',
    });
    assert.deepEqual(await checkedAgain(createDriver(asaasDriver, { secrets: ['asaas-unit-token-new'] }), request, proof), { outcome: 'no_match' });
  });

  test('pagarme: the kid; Basic Auth by fingerprint; a key withdrawn from the JWKS no longer verifies', async () => {
    const body = '{"id":"hook_unit","type":"charge.paid","created_at":"2025-01-01T00:00:00Z","data":{"id":"ch_1"}}';
    const basic = (credential: string) => `Basic ${Buffer.from(credential).toString('base64')}`;
    const request = webhookRequest(body, { 'x-webhook-asymmetric-signature': key.header(body), authorization: basic('user:old') });
    const pagarme = (secrets: string[]) => createDriver(pagarmeDriver, { secrets, options: { jwksUrl: server.url, jwksCooldownSeconds: 0 } });
    const proof = await proofOf(pagarme(['user:old']), request, new Date());
    assert.ok(proof.scheme === 'pagarme-rs256' && proof.kid === 'unit-kid' && proof.secret?.position === 1);
    assert.deepEqual(Object.keys(proof.signed.headers), ['x-webhook-asymmetric-signature'], 'the Authorization header is a secret: not kept');
    assert.deepEqual(await checkedAgain(pagarme(['user:new', 'user:old']), request, proof), { outcome: 'matches', position: 2, by: 'fingerprint' });
    assert.deepEqual(await checkedAgain(pagarme([]), request, proof), { outcome: 'matches', position: null, by: 'signature' });
    server.keys = [generateSigningKey('another-kid')];
    assert.deepEqual(await checkedAgain(pagarme([]), request, proof), { outcome: 'no_match' });
  });
});

test('the gateway-api variant (events fetched from an API) reads back through the same schema', () => {
  const proof = { scheme: 'gateway-api', endpoint: 'https://api.stripe.com/v1/events', fetchedAt: '2026-12-04T10:00:00.000Z' };
  assert.deepEqual(verificationProofSchema.parse(proof), proof);
});
