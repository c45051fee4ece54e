import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError } from '../../../src/errors.ts';
import { hmacDriver } from '../../../src/gateways/hmac/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

function hmacDriverWith(secrets: string[], options: Record<string, unknown>) {
  return createDriver(hmacDriver, { secrets, options: { typePath: 'type', ...options } });
}

describe('hmac: published vectors through the generic driver', () => {
  test('V3 (GitHub docs): sha256=<hex> over "Hello, World!"', async () => {
    const driver = hmacDriverWith(["It's a Secret to Everybody"], { header: 'X-Hub-Signature-256', prefix: 'sha256=' });
    const request = webhookRequest('Hello, World!', { 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' });
    assert.equal(await verifyOutcome(driver, request), 'ok');
  });

  test('V4 (octokit tests): sha256=<hex> over {"foo":"bar"}', async () => {
    const driver = hmacDriverWith(['mysecret'], { header: 'x-hub-signature-256', prefix: 'sha256=' });
    const request = webhookRequest('{"foo":"bar"}', { 'x-hub-signature-256': 'sha256=4864d2759938a15468b5df9ade20bf161da9b4f737ea61794142f3484236bda3' });
    assert.equal(await verifyOutcome(driver, request), 'ok');
  });

  test('V8 (pagarme-php tests): sha1=<hex>', async () => {
    const driver = hmacDriverWith(['apiKey'], { header: 'x-hub-signature', algorithm: 'sha1', prefix: 'sha1=' });
    const request = webhookRequest('foo=bar&bar=baz&baz=foo', { 'x-hub-signature': 'sha1=38114af54396acbba342ffa5076458ef8f0486c4' });
    assert.equal(await verifyOutcome(driver, request), 'ok');
  });

  test('D5 (Shopify algorithm): base64', async () => {
    const driver = hmacDriverWith(['hush'], { header: 'x-shopify-hmac-sha256', encoding: 'base64' });
    const request = webhookRequest('{"id":820982911946154508,"email":"jon@example.com"}', {
      'x-shopify-hmac-sha256': 'D0UMXmhjwBRi4y66TmhJrDlhQABD7zI2fm3p6/QLMo8=',
    });
    assert.equal(await verifyOutcome(driver, request), 'ok');
  });
});

describe('hmac: every way a signature can be wrong', () => {
  const SECRET = 'generic-secret';
  const driver = hmacDriverWith([SECRET], { header: 'x-signature', prefix: 'sha256=' });
  const body = '{"type":"charge.paid","id":"evt_1"}';
  const sign = (content: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(content).digest('hex')}`;

  test('node:crypto signs, the driver verifies', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-signature': sign(body) })), 'ok');
  });

  test('a wrong secret → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-signature': sign(body, 'other') })), 'signature_mismatch');
  });

  test('one byte of the body changed → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body.replace('evt_1', 'evt_2'), { 'x-signature': sign(body) })), 'signature_mismatch');
  });

  test('a missing header → signature_missing', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body)), 'signature_missing');
  });

  test('malformed headers → signature_malformed', async () => {
    const hex = sign(body).slice('sha256='.length);
    for (const value of ['this-is-garbage', 'sha256=', `sha256=${hex.slice(2)}`, hex, `sha1=${hex}`]) {
      assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-signature': value })), 'signature_malformed', value);
    }
  });

  test('base64: an equal-length but different signature → signature_mismatch', async () => {
    const base64 = hmacDriverWith(['hush'], { header: 'x-sig', encoding: 'base64' });
    const other = createHmac('sha256', 'not-hush').update('{}').digest('base64');
    assert.equal(await verifyOutcome(base64, webhookRequest('{}', { 'x-sig': other })), 'signature_mismatch');
  });

  test('any of several secrets may match (rotation)', async () => {
    const rotated = hmacDriverWith(['new-secret', SECRET], { header: 'x-signature', prefix: 'sha256=' });
    assert.equal(await verifyOutcome(rotated, webhookRequest(body, { 'x-signature': sign(body) })), 'ok');
  });
});

describe('hmac: optional signed timestamp header', () => {
  const driver = hmacDriverWith(['ts-secret'], { header: 'x-signature', timestampHeader: 'X-Timestamp' });
  const body = '{"type":"x"}';
  const signed = (timestamp: number, content = body) => ({
    'x-signature': createHmac('sha256', 'ts-secret').update(`${timestamp}.${content}`).digest('hex'),
    'x-timestamp': String(timestamp),
  });
  const now = new Date('2026-01-01T00:00:00Z');
  const t = now.getTime() / 1000;

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the name quotes the template of the signed text
  test('signs `${timestamp}.${body}` and accepts it within the tolerance', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, signed(t)), now), 'ok');
  });

  test('milliseconds are read as milliseconds', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, signed(t * 1000)), now), 'ok');
  });

  test('stale or future timestamps → timestamp_outside_tolerance', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, signed(t - 301)), now), 'timestamp_outside_tolerance');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, signed(t + 301)), now), 'timestamp_outside_tolerance');
  });

  test('a timestamp header changed after signing → signature_mismatch', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { ...signed(t), 'x-timestamp': String(t + 1) }), now), 'signature_mismatch');
  });

  test('a missing or non-numeric timestamp header → 401', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { 'x-signature': signed(t)['x-signature'] }), now), 'signature_missing');
    assert.equal(await verifyOutcome(driver, webhookRequest(body, { ...signed(t), 'x-timestamp': 'yesterday' }), now), 'signature_malformed');
  });
});

describe('hmac: field mapping and derived keys', () => {
  const now = new Date('2026-03-01T10:00:00Z');

  test('id, type, resource and time come from the configured paths and headers', () => {
    const driver = hmacDriverWith(['s'], {
      header: 'x',
      idHeader: 'X-Delivery',
      typePath: 'event.name',
      resourcePath: 'charge.id',
      occurredAtPath: 'charge.updated_at',
    });
    const event = driver.parse(
      webhookRequest('{"event":{"name":"charge.paid"},"charge":{"id":123,"updated_at":"2026-02-28T09:00:00-03:00"}}', { 'x-delivery': 'd-1' }),
      now,
    );
    assert.deepEqual(
      { ...event, payload: undefined },
      {
        eventId: 'd-1',
        eventType: 'charge.paid',
        resourceId: '123',
        occurredAt: new Date('2026-02-28T12:00:00Z'),
        occurredAtIsRequestTime: false,
        payload: undefined,
      },
    );
  });

  test('without an event id, resends that differ only in delivery metadata get the same derived key', () => {
    const driver = hmacDriverWith(['s'], {
      header: 'x',
      idPath: 'event_id',
      resourcePath: 'charge.id',
      statusPath: 'charge.status',
      occurredAtPath: 'charge.updated_at',
    });
    const attempt = (n: number, sentAt: string) =>
      driver.parse(
        webhookRequest(
          JSON.stringify({ type: 'charge.updated', attempt: n, sent_at: sentAt, charge: { id: 'ch_1', status: 'paid', updated_at: '2026-02-28T12:00:00Z' } }),
        ),
        new Date(sentAt),
      );
    const first = attempt(1, '2026-03-01T10:00:00Z');
    const resend = attempt(7, '2026-03-01T16:30:00Z');
    assert.match(first.eventId, /^derived:[0-9a-f]{64}$/);
    assert.equal(resend.eventId, first.eventId);
    const refunded = driver.parse(
      webhookRequest(JSON.stringify({ type: 'charge.updated', charge: { id: 'ch_1', status: 'refunded', updated_at: '2026-02-28T12:00:00Z' } })),
      now,
    );
    assert.notEqual(refunded.eventId, first.eventId, 'another status is another fact');
  });

  test('a derived key leaves out the receipt time when the gateway sends none', () => {
    const driver = hmacDriverWith(['s'], { header: 'x', resourcePath: 'id' });
    const a = driver.parse(webhookRequest('{"type":"t","id":"r1"}'), new Date('2026-01-01T00:00:00Z'));
    const b = driver.parse(webhookRequest('{"type":"t","id":"r1"}'), new Date('2026-01-02T00:00:00Z'));
    assert.equal(a.eventId, b.eventId);
    assert.equal(b.occurredAt.toISOString(), '2026-01-02T00:00:00.000Z', 'occurred_at falls back to the receipt time');
  });

  test('an unreadable event time → malformed_payload', () => {
    const driver = hmacDriverWith(['s'], { header: 'x', occurredAtPath: 'at' });
    assert.equal(
      errorCode(() => driver.parse(webhookRequest('{"type":"t","at":"last tuesday"}'), now)),
      'malformed_payload',
    );
  });

  test('bad options: every problem is listed', () => {
    assert.throws(
      () => createDriver(hmacDriver, { secrets: ['s'], options: { algorithm: 'md5', encoding: 'base32', headr: 'x' } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        const text = error.problems.join('\n');
        for (const expected of ['header', 'algorithm', 'encoding', 'headr', 'typePath']) assert.match(text, new RegExp(expected));
        return true;
      },
    );
  });
});
