import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type JwksServer, type TestSigningKey, generateSigningKey, startJwksServer } from '../gateways/jwks-server.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { chargeEvent, stripeSignature } from '../support/stripe.ts';
import { runInboxctl } from './run-inboxctl.ts';

// The proof of verification end to end: deliveries signed by independent signers (the official
// stripe SDK, the standardwebhooks library, node:crypto RSA with a JWKS on loopback) through the
// real service, then `inboxctl verify` (the real binary) against the secrets configured later.
const STRIPE_A = 'whsec_proof_secret_A_0123456789abcdef';
const STRIPE_B = 'whsec_proof_secret_B_fedcba9876543210';
const SW_OLD = `whsec_${Buffer.from('standard webhooks old key, 32 bytes').toString('base64')}`;
const SW_NEW = `whsec_${Buffer.from('standard webhooks new key, 32 bytes').toString('base64')}`;
const ASAAS_OLD = 'asaas-proof-token-old-0123456789';
const ASAAS_NEW = 'asaas-proof-token-new-9876543210';
const ALL_SECRETS = [STRIPE_A, STRIPE_B, SW_OLD, SW_NEW, ASAAS_OLD, ASAAS_NEW];
const DAY_MS = 86_400_000;

const database = useTestDatabase();
let service: TestService;
let jwks: JwksServer;
let pagarmeKey: TestSigningKey;
let configFile: string;
/** The service's clock runs this far from the real one (a delivery signed days ago, accepted then). */
let clockOffsetMs = 0;

setup(async () => {
  pagarmeKey = generateSigningKey('proof-key-1');
  jwks = await startJwksServer([pagarmeKey]);
  configFile = path.join(mkdtempSync(path.join(tmpdir(), 'inbox-verify-')), 'inbox.json');
  const config = JSON.stringify({ providers: { pagarme: { driver: 'pagarme', jwksUrl: jwks.url } } });
  // The CLI reads the file; the test service reads the same text from `files`.
  writeFileSync(configFile, config);
  service = await startTestService({
    database,
    files: { [configFile]: config },
    env: { INBOX_CONFIG: configFile, WEBHOOK_SECRET_STRIPE: STRIPE_A, WEBHOOK_SECRET_STANDARD_WEBHOOKS: SW_OLD, WEBHOOK_SECRET_ASAAS: ASAAS_OLD },
    clock: () => new Date(Date.now() + clockOffsetMs),
  });
});

after(async () => {
  await jwks?.close();
  if (configFile) rmSync(path.dirname(configFile), { recursive: true, force: true });
});

/** The CLI's environment: the same variables as the service's, with the secrets of the moment. */
function cliEnv(secrets: { stripe?: string; standardWebhooks?: string; asaas?: string } = {}): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    INBOX_CONFIG: configFile,
    WEBHOOK_SECRET_STRIPE: secrets.stripe ?? STRIPE_A,
    WEBHOOK_SECRET_STANDARD_WEBHOOKS: secrets.standardWebhooks ?? SW_OLD,
    WEBHOOK_SECRET_ASAAS: secrets.asaas ?? ASAAS_OLD,
  };
}

async function post(provider: string, body: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(`${service.baseUrl}/webhooks/${provider}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  assert.equal(response.status, 200, await response.text());
}

interface StoredProofRow {
  id: number;
  verification: any;
  whole: string;
}

async function storedRow(provider: string, eventId: string): Promise<StoredProofRow> {
  const [row] = await database.sql`
    select id::int as id, verification, webhook_inbox::text as whole from webhook_inbox where provider = ${provider} and event_id = ${eventId}`;
  assert.ok(row, `a row for ${provider} ${eventId}`);
  return row as unknown as StoredProofRow;
}

function assertNoSecretIn(text: string, where: string): void {
  for (const secret of ALL_SECRETS) {
    assert.ok(!text.includes(secret), `${where} holds a configured secret`);
    // Standard Webhooks keys are the base64 part; Stripe's are used whole.
    const key = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
    assert.ok(!text.includes(key), `${where} holds a configured secret's key`);
  }
}

async function deliverStripe(eventId: string, secret: string, signedAtSeconds = Math.floor(Date.now() / 1000)): Promise<StoredProofRow> {
  const body = chargeEvent({ id: eventId, type: 'charge.succeeded', chargeId: `ch_${eventId}`, created: signedAtSeconds });
  await post('stripe', body, { 'stripe-signature': stripeSignature(body, secret, signedAtSeconds) });
  return storedRow('stripe', eventId);
}

describe('the proof of verification stored with each delivery', () => {
  test('stripe: scheme, secret position and fingerprint, signed time, the signature header; never the secret', async () => {
    const signedAt = Math.floor(Date.now() / 1000) - 5;
    const row = await deliverStripe('evt_proof_stripe_1', STRIPE_A, signedAt);
    const proof = row.verification;
    assert.equal(proof.scheme, 'stripe-v1');
    assert.equal(proof.secret.position, 1);
    assert.match(proof.secret.fingerprint, /^[0-9a-f]{12}$/);
    assert.equal(proof.signedAt, new Date(signedAt * 1000).toISOString());
    assert.ok(Math.abs(Date.parse(proof.verifiedAt) - Date.now()) < 10 * 60_000, proof.verifiedAt);
    assert.match(proof.signed.headers['stripe-signature'], new RegExp(`^t=${signedAt},v1=[0-9a-f]{64}$`));
    assertNoSecretIn(row.whole, 'the inbox row');
    // The same secret always has the same fingerprint, another secret another one.
    const again = await deliverStripe('evt_proof_stripe_2', STRIPE_A);
    assert.equal(again.verification.secret.fingerprint, proof.secret.fingerprint);
  });

  test('standard-webhooks: the official signer; scheme, position, webhook-timestamp as signedAt', async () => {
    const id = 'msg_proof_sw_1';
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    const body = JSON.stringify({ type: 'invoice.paid', timestamp: at.toISOString(), data: { id: 'inv_1' } });
    const signature = new Webhook(SW_OLD).sign(id, at, body);
    await post('standard-webhooks', body, { 'webhook-id': id, 'webhook-timestamp': String(at.getTime() / 1000), 'webhook-signature': signature });
    const row = await storedRow('standard-webhooks', id);
    assert.deepEqual(
      { scheme: row.verification.scheme, position: row.verification.secret.position, signedAt: row.verification.signedAt },
      { scheme: 'standard-webhooks', position: 1, signedAt: at.toISOString() },
    );
    assert.equal(row.verification.signed.headers['webhook-signature'], signature);
    assertNoSecretIn(row.whole, 'the inbox row');
  });

  test('pagarme v5: RS256 with the JWKS key id', async () => {
    const body = JSON.stringify({
      id: 'hook_proofProofProof1',
      type: 'charge.paid',
      created_at: '2025-01-01T04:15:39Z',
      data: { id: 'ch_proof_pagarme_1', amount: 2590, paid_amount: 2590, status: 'paid', currency: 'BRL', paid_at: '2025-01-01T04:15:39Z' },
    });
    await post('pagarme', body, { 'x-webhook-asymmetric-signature': pagarmeKey.header(body) });
    const row = await storedRow('pagarme', 'hook_proofProofProof1');
    assert.deepEqual(
      { scheme: row.verification.scheme, kid: row.verification.kid, secret: row.verification.secret },
      { scheme: 'pagarme-rs256', kid: 'proof-key-1', secret: null },
    );
  });

  test('asaas: a static token is kept as its fingerprint only', async () => {
    const body = JSON.stringify({
      id: 'evt_proof_asaas_1&1',
      event: 'PAYMENT_RECEIVED',
      dateCreated: '2024-06-12 16:45:03',
      payment: { object: 'payment', id: 'pay_proof_1', value: 10.0, status: 'RECEIVED' },
    });
    await post('asaas', body, { 'asaas-access-token': ASAAS_OLD });
    const row = await storedRow('asaas', 'evt_proof_asaas_1&1');
    assert.deepEqual(Object.keys(row.verification).sort(), ['header', 'scheme', 'secret', 'verifiedAt']);
    assert.equal(row.verification.scheme, 'token');
    assert.equal(row.verification.secret.position, 1);
    assertNoSecretIn(row.whole, 'the inbox row');
  });
});

describe('inboxctl verify: the stored bytes against the secrets configured now', () => {
  test('rotation: signed with A; B alone → no match (exit 1); "B,A" → position 2; the secret is in no output', async () => {
    const { id } = await deliverStripe('evt_proof_rotation', STRIPE_A);

    const withA = await runInboxctl(['verify', String(id)], cliEnv());
    assert.equal(withA.code, 0, withA.stderr);
    assert.match(withA.out, /still verifies: secret #1 \(fingerprint [0-9a-f]{12}\)/);

    const withB = await runInboxctl(['verify', String(id)], cliEnv({ stripe: STRIPE_B }));
    assert.equal(withB.code, 1, withB.stderr);
    assert.match(withB.out, /NO configured secret matches now/);
    assert.match(withB.out, /1 event: 0 still verify, 1 verify with NO configured secret, 0 cannot be checked\./);

    const rotated = await runInboxctl(['verify', String(id), '--json'], cliEnv({ stripe: `${STRIPE_B},${STRIPE_A}` }));
    assert.equal(rotated.code, 0, rotated.stderr);
    const [event] = rotated.json().events;
    assert.equal(event.proof.secret.position, 1, 'position at receipt');
    assert.deepEqual(
      { outcome: event.now.outcome, position: event.now.secret.position, by: event.now.by },
      { outcome: 'matches', position: 2, by: 'signature' },
    );
    assert.equal(event.now.secret.fingerprint, event.proof.secret.fingerprint, 'the same secret, now at position 2');

    for (const run of [withA, withB, rotated]) assertNoSecretIn(run.out + run.stderr, 'inboxctl verify output');
  });

  test('an event signed 10 days ago still verifies: the tolerance is measured at the signed time', async () => {
    const tenDaysAgo = Math.floor((Date.now() - 10 * DAY_MS) / 1000);
    clockOffsetMs = -10 * DAY_MS;
    let row: StoredProofRow;
    try {
      row = await deliverStripe('evt_proof_old', STRIPE_A, tenDaysAgo);
    } finally {
      clockOffsetMs = 0;
    }
    const run = await runInboxctl(['verify', String(row.id)], cliEnv());
    assert.equal(run.code, 0, run.out + run.stderr);
    assert.match(run.out, /still verifies: secret #1/);
  });

  test('--since --provider: every event in the window, per provider; rotated lists report the new positions', async () => {
    const env = cliEnv({ standardWebhooks: `${SW_NEW},${SW_OLD}`, asaas: `${ASAAS_NEW},${ASAAS_OLD}` });
    const sw = await runInboxctl(['verify', '--since', '1h', '--provider', 'standard-webhooks', '--json'], env);
    assert.equal(sw.code, 0, sw.stderr);
    assert.deepEqual(
      sw.json().events.map((e: any) => [e.eventId, e.now.outcome, e.now.secret.position, e.now.by]),
      [['msg_proof_sw_1', 'matches', 2, 'signature']],
    );

    const asaas = await runInboxctl(['verify', '--since', '1h', '--provider', 'asaas', '--json'], env);
    assert.equal(asaas.code, 0, asaas.stderr);
    assert.deepEqual(
      asaas.json().events.map((e: any) => [e.now.outcome, e.now.secret.position, e.now.by]),
      [['matches', 2, 'fingerprint']],
    );

    const asaasGone = await runInboxctl(['verify', '--since', '1h', '--provider', 'asaas'], cliEnv({ asaas: ASAAS_NEW }));
    assert.equal(asaasGone.code, 1, asaasGone.stderr);
    assert.match(asaasGone.out, /NO configured secret matches now: the token it carried \(fingerprint [0-9a-f]{12}\) is not among the configured ones/);

    const pagarme = await runInboxctl(['verify', '--since', '1h', '--provider', 'pagarme', '--json'], env);
    assert.equal(pagarme.code, 0, pagarme.stderr);
    assert.deepEqual(
      pagarme.json().events.map((e: any) => [e.now.outcome, e.now.secret]),
      [['matches', null]],
    );

    const everything = await runInboxctl(['verify', '--since', '30d'], cliEnv({ stripe: STRIPE_B }));
    assert.equal(everything.code, 1, 'the stripe events no longer verify with B alone');
    assert.match(everything.out, / 0 cannot be checked\.$/m);
    for (const run of [sw, asaas, asaasGone, pagarme, everything]) assertNoSecretIn(run.out + run.stderr, 'inboxctl verify output');
  });

  test('inboxctl show prints the proof', async () => {
    const run = await runInboxctl(['show', 'stripe', 'evt_proof_stripe_1'], cliEnv());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.out, /^ {2}verified {5}stripe-v1: secret #1 \(fingerprint [0-9a-f]{12}\), signed \S+, verified \S+$/m);
    assertNoSecretIn(run.out, 'inboxctl show output');
  });

  test('usage: an id or --since, not both, not neither (exit 2); an unknown id (exit 1)', async () => {
    assert.equal((await runInboxctl(['verify'], cliEnv())).code, 2);
    assert.equal((await runInboxctl(['verify', '1', '--since', '1h'], cliEnv())).code, 2);
    const missing = await runInboxctl(['verify', '999999'], cliEnv());
    assert.equal(missing.code, 1, missing.stderr);
    assert.match(missing.stderr, /no event with inbox id 999999/);
  });
});
