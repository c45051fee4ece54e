import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { githubDriver } from '../../../src/gateways/github/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

const SECRET = 'github-hook-secret';
const driver = createDriver(githubDriver, { secrets: [SECRET] });
const body = '{"action":"opened","issue":{"id":1,"number":1347},"repository":{"id":1296269,"full_name":"octocat/Hello-World"}}';
const sign = (content: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(content).digest('hex')}`;
const delivery = (content: string, signature = sign(content), extra: Record<string, string> = {}) =>
  webhookRequest(content, {
    'x-hub-signature-256': signature,
    'x-github-event': 'issues',
    'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    ...extra,
  });

describe('github: published vectors', () => {
  test('V3 (GitHub docs) and V4 (octokit tests)', async () => {
    const v3 = createDriver(githubDriver, { secrets: ["It's a Secret to Everybody"] });
    assert.equal(
      await verifyOutcome(
        v3,
        webhookRequest('Hello, World!', { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' }),
      ),
      'ok',
    );
    const v4 = createDriver(githubDriver, { secrets: ['mysecret'] });
    assert.equal(
      await verifyOutcome(
        v4,
        webhookRequest('{"foo":"bar"}', { 'x-hub-signature-256': 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3' }),
      ),
      'ok',
    );
  });
});

describe('github: every way a signature can be wrong', () => {
  test('node:crypto signs, the driver verifies', async () => {
    assert.equal(await verifyOutcome(driver, delivery(body)), 'ok');
  });
  test('a wrong secret → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, delivery(body, sign(body, 'wrong'))), 'signature_mismatch');
  });
  test('one byte of the body changed → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, delivery(body.replace('1347', '1348'), sign(body))), 'signature_mismatch');
  });
  test('only the legacy SHA-1 header → signature_missing', async () => {
    const request = webhookRequest(body, { 'x-hub-signature': `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}` });
    assert.equal(await verifyOutcome(driver, request), 'signature_missing');
  });
  test('a digest without the sha256= prefix, or garbage → signature_malformed', async () => {
    assert.equal(await verifyOutcome(driver, delivery(body, sign(body).slice('sha256='.length))), 'signature_malformed');
    assert.equal(await verifyOutcome(driver, delivery(body, 'this-is-garbage')), 'signature_malformed');
  });
});

describe('github: parsing', () => {
  const now = new Date('2026-05-01T12:00:00Z');
  test('delivery id, event + action, repository, receipt time', () => {
    const event = driver.parse(delivery(body), now);
    assert.deepEqual(
      { ...event, payload: undefined },
      {
        eventId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        eventType: 'issues.opened',
        resourceId: 'octocat/Hello-World',
        occurredAt: now,
        occurredAtIsRequestTime: true,
        payload: undefined,
      },
    );
    assert.equal(driver.toPaymentFact({ provider: 'github', ...event, payloadLossy: false }), null);
  });
  test('a form-encoded hook is verified over the raw form and its payload field parsed', async () => {
    const form = `payload=${encodeURIComponent('{"zen":"Keep it logically awesome.","hook_id":1}')}`;
    const request = delivery(form, sign(form), { 'content-type': 'application/x-www-form-urlencoded', 'x-github-event': 'ping' });
    assert.equal(await verifyOutcome(driver, request), 'ok');
    const event = driver.parse(request, now);
    assert.equal(event.eventType, 'ping');
    assert.deepEqual(event.payload, { zen: 'Keep it logically awesome.', hook_id: 1 });
  });
  test('no X-GitHub-Delivery → malformed_payload', () => {
    assert.equal(
      errorCode(() => driver.parse(webhookRequest(body, { 'x-github-event': 'issues' }), now)),
      'malformed_payload',
    );
  });
});
