import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { ConfigError } from '../../../src/errors.ts';
import { standardWebhooksDriver } from '../../../src/gateways/standard-webhooks/webhook-driver.ts';
import { createDriver, errorCode, verifyOutcome, webhookRequest } from '../request.ts';

// Published vector V1 (standard-webhooks libraries' "sign function works" test, all languages),
// recomputed with openssl before being written here.
const V1_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const V1 = {
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
// V2: the non-matching filler the reference tests mix into multi-signature headers.
const V2_FILLER = 'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=';
// D6: the spec's example body under the V1 key (openssl and Python agree).
const D6 = {
  id: 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
  timestamp: 1674087231,
  body: '{"type":"contact.created","timestamp":"2022-11-03T20:26:10.344522Z","data":{"id":"1f81eb52-5198-4599-803e-771906343485"}}',
  signature: 'v1,ARw42xaAApl/nxRo+iPGYwSaMQaOwMo2eyH5JBRA+bQ=',
};

const driver = createDriver(standardWebhooksDriver, { secrets: [V1_SECRET] });
const at = (seconds: number) => new Date(seconds * 1000);

function headers(id: string, timestamp: number, signature: string) {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

// The official `standardwebhooks` package signs everything that is not a published vector.
function officialSigned(body: string, secret = V1_SECRET, id = 'msg_test_1', timestamp = Math.floor(Date.now() / 1000)) {
  return webhookRequest(body, headers(id, timestamp, new Webhook(secret).sign(id, at(timestamp), body)));
}

describe('standard-webhooks: published vectors', () => {
  test('V1 verifies at its own timestamp', async () => {
    assert.equal(await verifyOutcome(driver, webhookRequest(V1.body, headers(V1.id, V1.timestamp, V1.signature)), at(V1.timestamp)), 'ok');
  });

  test('D6 (the spec example body) verifies and parses into the normalized event', async () => {
    const request = webhookRequest(D6.body, headers(D6.id, D6.timestamp, D6.signature));
    assert.equal(await verifyOutcome(driver, request, at(D6.timestamp)), 'ok');
    const event = driver.parse(request, at(D6.timestamp));
    assert.equal(event.eventId, D6.id);
    assert.equal(event.eventType, 'contact.created');
    assert.equal(event.resourceId, '1f81eb52-5198-4599-803e-771906343485');
    assert.equal(event.occurredAt.toISOString(), '2022-11-03T20:26:10.344Z');
  });

  test('a multi-signature header with only the last entry valid verifies', async () => {
    const request = webhookRequest(V1.body, headers(V1.id, V1.timestamp, `${V2_FILLER} ${V2_FILLER} ${V1.signature}`));
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp)), 'ok');
  });

  test('unknown versions (v2, v1a) mixed in are skipped', async () => {
    const signature = `v2,${V1.signature.slice(3)} v1a,c29tZS1lZDI1NTE5 ${V1.signature}`;
    assert.equal(await verifyOutcome(driver, webhookRequest(V1.body, headers(V1.id, V1.timestamp, signature)), at(V1.timestamp)), 'ok');
  });
});

describe('standard-webhooks: every way a signature can be wrong', () => {
  test('the official library signs, this driver verifies', async () => {
    assert.equal(await verifyOutcome(driver, officialSigned('{"type":"invoice.paid","data":{"id":"in_1"}}')), 'ok');
  });

  test('a wrong secret → signature_mismatch', async () => {
    const request = officialSigned('{"type":"invoice.paid"}', `whsec_${Buffer.from('another key of 24 bytes!').toString('base64')}`);
    assert.equal(await verifyOutcome(driver, request), 'signature_mismatch');
  });

  test('one byte of the body changed → signature_mismatch', async () => {
    const request = officialSigned('{"type":"invoice.paid","amount":100}');
    const tampered = webhookRequest(
      '{"type":"invoice.paid","amount":900}',
      Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, request.header(h)!])),
    );
    assert.equal(await verifyOutcome(driver, tampered), 'signature_mismatch');
  });

  test('one whitespace added to the body → signature_mismatch', async () => {
    const tampered = webhookRequest(V1.body.replace(': ', ':  '), headers(V1.id, V1.timestamp, V1.signature));
    assert.equal(await verifyOutcome(driver, tampered, at(V1.timestamp)), 'signature_mismatch');
  });

  test('a signature for another message id → signature_mismatch', async () => {
    assert.equal(
      await verifyOutcome(driver, webhookRequest(V1.body, headers('msg_other', V1.timestamp, V1.signature)), at(V1.timestamp)),
      'signature_mismatch',
    );
  });

  for (const missing of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    test(`a missing ${missing} header → signature_missing`, async () => {
      const all: Record<string, string> = headers(V1.id, V1.timestamp, V1.signature);
      delete all[missing];
      assert.equal(await verifyOutcome(driver, webhookRequest(V1.body, all), at(V1.timestamp)), 'signature_missing');
    });
  }

  test('a malformed signature header → signature_malformed', async () => {
    for (const garbage of ['this-is-garbage', 'v1,', ',abc']) {
      assert.equal(
        await verifyOutcome(driver, webhookRequest(V1.body, headers(V1.id, V1.timestamp, garbage)), at(V1.timestamp)),
        'signature_malformed',
        garbage,
      );
    }
  });

  test('a non-integer timestamp → signature_malformed', async () => {
    const request = webhookRequest(V1.body, { ...headers(V1.id, V1.timestamp, V1.signature), 'webhook-timestamp': '1614265330.5' });
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp)), 'signature_malformed');
  });

  test('only unknown versions → signature_mismatch (nothing this driver can check)', async () => {
    const request = webhookRequest(V1.body, headers(V1.id, V1.timestamp, `v1a,${V1.signature.slice(3)}`));
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp)), 'signature_mismatch');
  });

  test('a timestamp older or newer than the tolerance → timestamp_outside_tolerance', async () => {
    const request = webhookRequest(V1.body, headers(V1.id, V1.timestamp, V1.signature));
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp + 301)), 'timestamp_outside_tolerance');
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp - 301)), 'timestamp_outside_tolerance');
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp + 299)), 'ok');
  });
});

describe('standard-webhooks: secrets and parsing', () => {
  test('any of several secrets may match (rotation)', async () => {
    const rotated = createDriver(standardWebhooksDriver, { secrets: [`whsec_${Buffer.from('the new key, 24 bytes ok').toString('base64')}`, V1_SECRET] });
    assert.equal(await verifyOutcome(rotated, webhookRequest(V1.body, headers(V1.id, V1.timestamp, V1.signature)), at(V1.timestamp)), 'ok');
  });

  test('svix-* header names are read too', async () => {
    const request = webhookRequest(V1.body, { 'svix-id': V1.id, 'svix-timestamp': String(V1.timestamp), 'svix-signature': V1.signature });
    assert.equal(await verifyOutcome(driver, request, at(V1.timestamp)), 'ok');
  });

  test('a secret that is not whsec_<base64> is a configuration error naming it', () => {
    assert.throws(
      () => createDriver(standardWebhooksDriver, { secrets: [V1_SECRET, 'whsec_not base64!'] }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, ['secret #2 is not a Standard Webhooks secret (whsec_ followed by base64)']);
        return true;
      },
    );
  });

  test('field paths can be overridden', () => {
    const custom = createDriver(standardWebhooksDriver, {
      secrets: [V1_SECRET],
      options: { typePath: 'event', resourcePath: 'object.uid', occurredAtPath: 'at' },
    });
    const event = custom.parse(
      webhookRequest('{"event":"order.paid","object":{"uid":42},"at":"2024-08-20T12:00:00.123456789Z"}', headers('msg_1', 1, 'v1,x')),
      new Date(),
    );
    assert.deepEqual([event.eventType, event.resourceId, event.occurredAt.toISOString()], ['order.paid', '42', '2024-08-20T12:00:00.123Z']);
  });

  test('without a body timestamp the signed webhook-timestamp stands in', () => {
    const event = driver.parse(webhookRequest('{"type":"ping"}', headers('msg_2', 1674087231, 'v1,x')), new Date());
    assert.equal(event.occurredAt.toISOString(), '2023-01-19T00:13:51.000Z');
    assert.equal(event.resourceId, null);
  });

  test('a body without a type → malformed_payload', () => {
    assert.equal(
      errorCode(() => driver.parse(webhookRequest('{"data":{}}', headers('msg_3', 1, 'v1,x')), new Date())),
      'malformed_payload',
    );
  });

  test('an unknown option is reported', () => {
    assert.throws(() => createDriver(standardWebhooksDriver, { secrets: [V1_SECRET], options: { typpePath: 'x' } }), /Unrecognized key/);
  });
});
