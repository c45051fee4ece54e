import assert from 'node:assert/strict';
import { generateKeyPairSync, createPublicKey, verify as verifySignature } from 'node:crypto';
import { describe, test } from 'node:test';
import { signWebhook, signingKey } from '../../src/delivery/sign.ts';
import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, type Verifier, applyBySequence, standardWebhooksVerifier, startConsumer } from './support/consumer.ts';
import { allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

/**
 * An ed25519 key pair as an operator makes one (docs/destinations.md): `whsk_` is the base64 of
 * the 32-byte seed, `whpk_` of the 32-byte public key — the Standard Webhooks libraries' format.
 */
function newEd25519KeyPair(): { secret: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(16);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  return { secret: `whsk_${seed.toString('base64')}`, publicKey: `whpk_${raw.toString('base64')}` };
}

/**
 * A `v1a` check the application could write with node:crypto and the public key alone (the
 * JavaScript `standardwebhooks` package has no v1a): the same signed content `id.timestamp.body`,
 * each space-separated signature of version v1a tried, the timestamp within ±5 minutes.
 */
function ed25519Verifier(publicKey: string): Verifier {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKey.slice('whpk_'.length), 'base64')]);
  const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
  return (body, headers) => {
    const [id, timestamp, signatures] = [headers['webhook-id'], headers['webhook-timestamp'], headers['webhook-signature']];
    if (!id || !timestamp || !signatures) throw new Error('missing headers');
    if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) throw new Error('timestamp out of tolerance');
    const signed = Buffer.from(`${id}.${timestamp}.${body}`);
    const ok = signatures.split(' ').some((s) => s.startsWith('v1a,') && verifySignature(null, signed, key, Buffer.from(s.slice(4), 'base64')));
    if (!ok) throw new Error('no matching v1a signature');
    return JSON.parse(body);
  };
}

describe('v1a: ed25519 signing', () => {
  // The published vector of the Standard Webhooks reference implementation (libraries/go/webhook_asymmetric_test.go, TestAsymmetricWebhookSign).
  test('signs the published Standard Webhooks vector byte for byte', () => {
    const headers = signWebhook(
      [signingKey('whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=')],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      new Date(1614265330 * 1000),
      '{"test": 2432232314}',
    );
    assert.equal(headers['webhook-signature'], 'v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==');
  });

  test('one negative per way it can be wrong: another body, id, timestamp or key', () => {
    const pair = newEd25519KeyPair();
    const body = '{"id":"x"}';
    const headers = { ...signWebhook([signingKey(pair.secret)], 'evt_1', new Date(), body) };
    assert.deepEqual(ed25519Verifier(pair.publicKey)(body, headers), { id: 'x' });
    const refuses = (b: string, h: Record<string, string>, publicKey = pair.publicKey) => assert.throws(() => ed25519Verifier(publicKey)(b, h));
    refuses(`${body} `, headers);
    refuses(body, { ...headers, 'webhook-id': 'evt_2' });
    refuses(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) });
    refuses(body, headers, newEd25519KeyPair().publicKey);
  });
});

// During a rotation the destination holds two secrets and signs every event with both, in one
// webhook-signature header: the application may switch its secret at any moment in between.
// `rotating`: two HMAC secrets; `moving`: from HMAC to ed25519.
const oldSecret = newDestinationSecret();
const newSecret = newDestinationSecret();
const movingOld = newDestinationSecret();
const movingNew = newEd25519KeyPair();
const CHARGES = Array.from({ length: 6 }, (_, n) => `ch_rotating_${n}`);

const database = useTestDatabase();
let rotating: Consumer;
let moving: Consumer;
let service: TestService;

setup(async () => {
  database.onTeardown(() => Promise.all([rotating?.close(), moving?.close()]));
  // Each consumer checks every request once per secret it could hold, each check on its own: a request counts as verified only if all pass.
  rotating = await startConsumer([standardWebhooksVerifier(oldSecret), standardWebhooksVerifier(newSecret)]);
  moving = await startConsumer([standardWebhooksVerifier(movingOld), ed25519Verifier(movingNew.publicKey)]);
  service = await startTestService({
    database,
    env: {
      WEBHOOK_SECRET_STRIPE: SECRET,
      DESTINATION_URL_ROTATING: rotating.url,
      DESTINATION_SECRET_ROTATING: `${newSecret} ${oldSecret}`,
      DESTINATION_URL_MOVING: moving.url,
      DESTINATION_SECRET_MOVING: `${movingOld} ${movingNew.secret}`,
    },
  });
});

test('during the overlap a consumer holding only the old secret and one holding only the new both verify every event', async () => {
  for (const [n, chargeId] of CHARGES.entries()) {
    const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: 1_760_000_000 + n });
    assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
    const refunded = chargeEvent({ id: `evt_${chargeId}_refund`, type: 'charge.refunded', chargeId, created: 1_760_000_060 + n, amountRefunded: 2000 });
    await waitFor(async () => (await paymentsOf(database.sql, [chargeId]))[0]?.eventSequence === 1, { message: `${chargeId} paid` });
    assert.equal((await postStripe(service.baseUrl, refunded, SECRET)).status, 200);
  }
  const payments = await waitFor(
    async () => {
      const rows = await paymentsOf(database.sql, CHARGES);
      return rows.length === CHARGES.length && rows.every((p) => p.eventSequence === 2) ? rows : undefined;
    },
    { message: 'every charge paid and refunded' },
  );
  for (const [name, consumer] of [
    ['rotating', rotating],
    ['moving', moving],
  ] as const) {
    await waitFor(() => allDelivered(consumer, payments), { message: `${name}: every event delivered`, timeoutMs: 30_000 });
    assert.equal(consumer.received.length, CHARGES.length * 2, `${name}: each event once`);
    assert.deepEqual(consumer.refusedBy, [0, 0], `${name}: neither secret alone refused any event`);
    assert.equal(consumer.unverified, 0);
    for (const payment of payments) assert.ok(applyBySequence(consumer.acceptedFor(payment.chargeId)).inOrder, payment.chargeId);
  }
});
