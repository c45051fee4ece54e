import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { tokenDriver } from '../../../src/gateways/token/webhook-driver.ts';
import { createDriver, verifyOutcome, webhookRequest } from '../request.ts';

const TOKEN = 'a-token-of-at-least-32-characters-long';
const driver = createDriver(tokenDriver, { secrets: [TOKEN], options: { header: 'X-Webhook-Token', typePath: 'event', idPath: 'id' } });
const body = '{"id":"evt_1","event":"THING_HAPPENED"}';

describe('token: a fixed token in a header', () => {
  test('the configured token verifies', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-token': TOKEN })), 'ok');
  });

  test('a wrong token, a prefix of it, or it with a byte more → signature_mismatch', async () => {
    for (const wrong of ['wrong', TOKEN.slice(0, -1), `${TOKEN}x`]) {
      assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-token': wrong })), 'signature_mismatch', wrong);
    }
  });

  test('a missing or empty header → signature_missing', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body)), 'signature_missing');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-webhook-token': '' })), 'signature_missing');
  });

  test('any of several tokens may match (rotation)', async () => {
    const rotated = createDriver(tokenDriver, { secrets: ['new-token', TOKEN], options: { header: 'x-webhook-token', typePath: 'event' } });
    assert.equal(await verifyOutcome(rotated, webhookRequest(body, { 'x-webhook-token': TOKEN })), 'ok');
  });

  test('parses by the configured paths', () => {
    const event = driver.parse(webhookRequest(body), new Date('2026-01-01T00:00:00Z'));
    assert.deepEqual([event.eventId, event.eventType, event.resourceId], ['evt_1', 'THING_HAPPENED', null]);
  });

  test('a token driver without a header option is a configuration error', () => {
    assert.throws(() => createDriver(tokenDriver, { secrets: [TOKEN], options: { typePath: 'event' } }), /option header/);
  });
});
