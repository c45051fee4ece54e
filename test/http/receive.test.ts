import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe, stripeSignature } from '../support/stripe.ts';

const SECRET = 'whsec_receive_test_secret';
const OLD_SECRET = 'whsec_previous_secret';
const database = useTestDatabase();
let sequence = 0;

function newEvent(type = 'charge.succeeded') {
  sequence += 1;
  return chargeEvent({ id: `evt_receive_${sequence}`, type, chargeId: `ch_receive_${sequence}`, created: Math.floor(Date.now() / 1000) });
}

async function inboxCount(eventId: string): Promise<number> {
  const [row] = await database.sql`select count(*)::int as n from webhook_inbox where event_id = ${eventId}`;
  return row!.n;
}

async function jobCount(inboxEventId: string): Promise<number> {
  const [row] = await database.sql`
    select count(*)::int as n from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
    where j.name = 'webhooks' and i.event_id = ${inboxEventId}`;
  return row!.n;
}

// Receiver only: jobs stay queued, so the test can count them.
const service = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: `${SECRET},${OLD_SECRET}`, MAX_BODY_BYTES: '4096' } });

describe('POST /webhooks/stripe', () => {
  test('a new event gets 200 {"received":true}, one inbox row and one job', async () => {
    const body = newEvent();
    const eventId = JSON.parse(body).id as string;
    const response = await postStripe(service.baseUrl, body, SECRET);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { received: true });
    assert.equal(await inboxCount(eventId), 1);
    assert.equal(await jobCount(eventId), 1);
    const [row] =
      await database.sql`select provider, event_type, resource_id, status, attempts, raw_body, payload from webhook_inbox where event_id = ${eventId}`;
    assert.equal(row!.provider, 'stripe');
    assert.equal(row!.event_type, 'charge.succeeded');
    assert.equal(row!.resource_id, `ch_receive_${sequence}`);
    assert.equal(row!.status, 'pending');
    assert.equal(row!.attempts, 0);
    assert.equal(Buffer.from(row!.raw_body).toString('utf8'), body, 'raw body stored byte for byte');
    assert.deepEqual(row!.payload, JSON.parse(body));
  });

  test('the job is keyed by the charge, so one charge is processed by one worker at a time', async () => {
    const body = newEvent();
    const eventId = JSON.parse(body).id as string;
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    const [job] = await database.sql`
      select j.singleton_key, j.policy from pgboss.job j join webhook_inbox i on (j.data->>'inboxId')::bigint = i.id
      where i.event_id = ${eventId}`;
    assert.equal(job!.singleton_key, `stripe:ch_receive_${sequence}`);
    assert.equal(job!.policy, 'singleton');
  });

  test('the same event delivered 50 times at once gets 50 × 200, one row and one job', async () => {
    const body = newEvent();
    const eventId = JSON.parse(body).id as string;
    const responses = await Promise.all(Array.from({ length: 50 }, () => postStripe(service.baseUrl, body, SECRET)));
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([200]));
    assert.equal(await inboxCount(eventId), 1);
    assert.equal(await jobCount(eventId), 1);
  });

  test('a resend of a stored event gets 200 and writes nothing', async () => {
    const body = newEvent();
    const eventId = JSON.parse(body).id as string;
    assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    const resend = await postStripe(service.baseUrl, body, SECRET);
    assert.equal(resend.status, 200);
    assert.equal(await inboxCount(eventId), 1);
    assert.equal(await jobCount(eventId), 1);
  });

  test('a delivery signed with the previous secret is accepted during a rotation', async () => {
    const body = newEvent();
    assert.equal((await postStripe(service.baseUrl, body, OLD_SECRET)).status, 200);
    assert.equal(await inboxCount(JSON.parse(body).id), 1);
  });
});

// The other ways a delivery is refused are in webhook-route.test.ts, in-process; these two go
// over a real socket to a real database.
describe('rejected deliveries store nothing', () => {
  async function expectRejected(response: Response, status: number, code: string, eventId?: string) {
    assert.equal(response.status, status);
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, code);
    assert.ok(!body.error.message.includes(SECRET), 'never echoes the secret');
    if (eventId) assert.equal(await inboxCount(eventId), 0);
  }

  test('a wrong secret gets 401 signature_mismatch', async () => {
    const body = newEvent();
    await expectRejected(await postStripe(service.baseUrl, body, 'whsec_wrong'), 401, 'signature_mismatch', JSON.parse(body).id);
  });

  test('a body over MAX_BODY_BYTES gets 413 over a real socket, with or without Content-Length', async () => {
    const big = JSON.stringify({ id: 'evt_big', padding: 'x'.repeat(5000) });
    await expectRejected(await postStripe(service.baseUrl, big, SECRET), 413, 'payload_too_large');
    const chunked = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
        controller.close();
      },
    });
    const response = await fetch(`${service.baseUrl}/webhooks/stripe`, {
      method: 'POST',
      body: chunked,
      duplex: 'half',
      headers: { 'stripe-signature': stripeSignature('x', SECRET) },
    } as RequestInit);
    await expectRejected(response, 413, 'payload_too_large');
  });
});
