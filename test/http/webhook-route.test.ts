import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { createRouteApp } from '../support/route-app.ts';
import { chargeEvent, stripeSignature } from '../support/stripe.ts';

// What the route decides before anything is stored, in-process with app.request() and a fake
// ingestor (hono's style). The real-socket and real-database side of the same rules stays in
// receive.test.ts: one rejected delivery that stores nothing, and a chunked body over the limit.

const SECRET = 'whsec_route_test_secret';
const MAX_BODY_BYTES = 4096;
const { app, ingested } = createRouteApp({ env: { WEBHOOK_SECRET_STRIPE: SECRET }, maxBodyBytes: MAX_BODY_BYTES });
let sequence = 0;

function newEvent() {
  sequence += 1;
  return chargeEvent({ id: `evt_route_${sequence}`, type: 'charge.succeeded', chargeId: `ch_route_${sequence}`, created: Math.floor(Date.now() / 1000) });
}

function post(body: string | ReadableStream<Uint8Array>, headers: Record<string, string>, provider = 'stripe') {
  return app.request(`/webhooks/${provider}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
    duplex: 'half',
  } as RequestInit);
}

const signed = (body: string, signature = stripeSignature(body, SECRET)) => post(body, { 'stripe-signature': signature });

async function expectRejected(response: Response, status: number, code: string) {
  const before = ingested.length;
  assert.equal(response.status, status);
  const body = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, code);
  assert.ok(!body.error.message.includes(SECRET), 'never echoes the secret');
  assert.equal(ingested.length, before, 'nothing reached the ingestor');
}

describe('POST /webhooks/:provider, in-process', () => {
  test('a correctly signed event is handed to the ingestor once, with its exact bytes, and answered 200 {"received":true}', async () => {
    const body = newEvent();
    const before = ingested.length;
    const response = await signed(body);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { received: true });
    assert.equal(ingested.length, before + 1);
    assert.equal(Buffer.from(ingested.at(-1)!.rawBody).toString('utf8'), body);
  });

  test('a body changed after signing gets 401 signature_mismatch', async () => {
    const body = newEvent();
    const signature = stripeSignature(body, SECRET);
    await expectRejected(await signed(body.replace('"amount":2000', '"amount":2001'), signature), 401, 'signature_mismatch');
  });

  test('a signature older than the tolerance gets 401 timestamp_outside_tolerance', async () => {
    const body = newEvent();
    await expectRejected(await signed(body, stripeSignature(body, SECRET, Math.floor(Date.now() / 1000) - 301)), 401, 'timestamp_outside_tolerance');
  });

  test('a signature from the future beyond the tolerance gets 401 timestamp_outside_tolerance', async () => {
    const body = newEvent();
    await expectRejected(await signed(body, stripeSignature(body, SECRET, Math.floor(Date.now() / 1000) + 301)), 401, 'timestamp_outside_tolerance');
  });

  test('a missing signature header gets 401 signature_missing', async () => {
    await expectRejected(await post(newEvent(), {}), 401, 'signature_missing');
  });

  test('a garbage signature header gets 401 signature_malformed', async () => {
    await expectRejected(await signed(newEvent(), 'this-is-garbage'), 401, 'signature_malformed');
  });

  test('an unknown provider gets 404 unknown_provider', async () => {
    const body = newEvent();
    await expectRejected(await post(body, { 'stripe-signature': stripeSignature(body, SECRET) }, 'nope'), 404, 'unknown_provider');
  });

  test("an unknown provider's 404 does not repeat the path: 8 KB of it, control characters included, came back whole", async () => {
    const sent = `sentvalue${'x'.repeat(8_000)}%00%E2%80%AE`;
    const response = await post(newEvent(), {}, sent);
    assert.equal(response.status, 404);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'unknown_provider');
    assert.ok(!error.message.includes('sentvalue') && error.message.length < 200, error.message.slice(0, 120));
  });

  test('a compressed body gets 415 content_encoding_unsupported, not a signature mismatch; identity is no encoding', async () => {
    const body = newEvent();
    const gzipped = gzipSync(body);
    const response = await app.request('/webhooks/stripe', {
      method: 'POST',
      body: gzipped,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'stripe-signature': stripeSignature(body, SECRET) },
    });
    assert.equal(response.status, 415);
    assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'content_encoding_unsupported');
    assert.equal((await post(body, { 'stripe-signature': stripeSignature(body, SECRET), 'content-encoding': 'identity' })).status, 200);
  });

  test('a correctly signed body that is not JSON gets 400 malformed_payload', async () => {
    await expectRejected(await signed('{"id": "evt_truncated", "type": '), 400, 'malformed_payload');
  });

  test('a signed JSON body that is not a Stripe event gets 400 malformed_payload', async () => {
    await expectRejected(await signed('{"hello":"world"}'), 400, 'malformed_payload');
  });

  test('a body over the limit gets 413 payload_too_large, with Content-Length or streamed without it', async () => {
    const big = JSON.stringify({ id: 'evt_big', padding: 'x'.repeat(MAX_BODY_BYTES) });
    await expectRejected(await signed(big), 413, 'payload_too_large');
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
        controller.close();
      },
    });
    await expectRejected(await post(chunked, { 'stripe-signature': stripeSignature('x', SECRET) }), 413, 'payload_too_large');
  });
});
