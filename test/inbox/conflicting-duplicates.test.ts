import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { sampleValue, scrape } from '../observability/prometheus-text.ts';
import { chargeEvent, postStripe, stripeSignature } from '../support/stripe.ts';

const SECRET = 'whsec_conflicting_duplicates_test';
// Only the bodies carry this: a log line holding it would hold payload bytes.
const PAYLOAD_MARKER = 'conflict-payload-marker-5d1e@example.com';
const { lines, destination } = logLineCapture();
const database = useTestDatabase();
let sequence = 0;

// Receiver only: the stored event stays pending, so the test sees exactly what ingest wrote.
const service = useService({ database, env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET }, logger: createLogger('info', destination) });

/** A Stripe charge event as the gateway sends it, with the marker in the charge's receipt_email. */
function stripeBody(eventId: string, chargeId: string, type: string, extra: { amountRefunded?: number } = {}): string {
  const event = JSON.parse(chargeEvent({ id: eventId, type, chargeId, created: 1_767_225_600, amountRefunded: extra.amountRefunded }));
  event.data.object.receipt_email = PAYLOAD_MARKER;
  return JSON.stringify(event);
}

function nextIds() {
  sequence += 1;
  return { eventId: `evt_conflict_${sequence}`, chargeId: `ch_conflict_${sequence}` };
}

const logLinesOf = (eventId: string) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.eventId === eventId);

async function storedEvent(eventId: string) {
  const [row] = await database.sql`select id::int as id, event_type, raw_body from webhook_inbox where provider = 'stripe' and event_id = ${eventId}`;
  return row;
}

async function conflictsOf(eventId: string) {
  return [
    ...(await database.sql`select inbox_id::int as inbox_id, provider, event_id, raw_body, differences from webhook_inbox_conflicts where event_id = ${eventId} order by id`),
  ];
}

describe('a duplicate delivery that says something else (issue 11, item 2)', () => {
  test('charge.succeeded then charge.refunded under one id: both 200, the second is kept as a conflict and logged at warn', async () => {
    const { eventId, chargeId } = nextIds();
    const succeeded = stripeBody(eventId, chargeId, 'charge.succeeded');
    const refunded = stripeBody(eventId, chargeId, 'charge.refunded', { amountRefunded: 2000 });
    assert.equal((await postStripe(service.baseUrl, succeeded, SECRET)).status, 200);
    assert.equal((await postStripe(service.baseUrl, refunded, SECRET)).status, 200, 'still 200: the gateway must stop resending');

    const stored = await storedEvent(eventId);
    assert.equal(stored!.event_type, 'charge.succeeded', 'the first body stays the truth');
    assert.equal(Buffer.from(stored!.raw_body).toString('utf8'), succeeded);

    const [, second] = logLinesOf(eventId);
    assert.ok(second, 'the second delivery is logged');
    assert.equal(second.outcome, 'conflicting_duplicate');
    assert.equal(second.level, 40, 'at warn level');
    assert.equal(second.provider, 'stripe');
    assert.equal(second.inboxId, stored!.id, 'names the stored event it contradicts');
    assert.ok(!lines.some((l) => l.includes(PAYLOAD_MARKER)), 'no payload byte reaches a log line');

    const conflicts = await conflictsOf(eventId);
    assert.equal(conflicts.length, 1);
    assert.equal(conflicts[0]!.inbox_id, stored!.id);
    assert.equal(conflicts[0]!.provider, 'stripe');
    assert.ok(Buffer.from(conflicts[0]!.raw_body).equals(Buffer.from(refunded)), 'the conflicting body is kept byte for byte');
    assert.deepEqual(conflicts[0]!.differences, [
      { field: 'eventType', stored: 'charge.succeeded', received: 'charge.refunded' },
      { field: 'status', stored: 'paid', received: 'refunded' },
      { field: 'amountRefunded', stored: 0, received: 2000 },
    ]);
  });

  test('a resend with only counters changed (pending_webhooks, request, key order, a later signature) is an ordinary duplicate', async () => {
    const { eventId, chargeId } = nextIds();
    const first = stripeBody(eventId, chargeId, 'charge.succeeded');
    const event = JSON.parse(first);
    // What Stripe changes between resends, and a different key order and spacing on top.
    const { data, ...envelope } = { ...event, pending_webhooks: 3, request: { id: 'req_resend_9', idempotency_key: null } };
    const resend = JSON.stringify({ data, ...envelope }, null, 1);
    assert.equal((await postStripe(service.baseUrl, first, SECRET)).status, 200);
    const later = stripeSignature(resend, SECRET, Math.floor(Date.now() / 1000) + 60);
    assert.equal((await postStripe(service.baseUrl, resend, SECRET, { signature: later })).status, 200);

    assert.deepEqual(await conflictsOf(eventId), []);
    const [, second] = logLinesOf(eventId);
    assert.equal(second!.outcome, 'duplicate');
    assert.equal(second!.level, 30);
  });

  test('each conflicting delivery is recorded exactly once, resends of the stored body never', async () => {
    const { eventId, chargeId } = nextIds();
    const stored = stripeBody(eventId, chargeId, 'charge.pending');
    const other = stripeBody(eventId, chargeId, 'charge.failed');
    for (const body of [stored, other, stored, other, other, stored]) assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    const conflicts = await conflictsOf(eventId);
    assert.equal(conflicts.length, 3, 'three deliveries of the other body');
    for (const conflict of conflicts) assert.ok(Buffer.from(conflict.raw_body).equals(Buffer.from(other)));
  });

  test('50 concurrent deliveries, 25 of each body: one row, and exactly the 25 copies of the other body on record', async () => {
    const { eventId, chargeId } = nextIds();
    const a = stripeBody(eventId, chargeId, 'charge.succeeded');
    const b = stripeBody(eventId, chargeId, 'charge.refunded', { amountRefunded: 500 });
    const bodies = Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? a : b));
    const answers = await Promise.all(bodies.map((body) => postStripe(service.baseUrl, body, SECRET)));
    assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([200]));

    const [{ n }] = (await database.sql`select count(*)::int as n from webhook_inbox where event_id = ${eventId}`) as unknown as [{ n: number }];
    assert.equal(n, 1);
    const winner = Buffer.from((await storedEvent(eventId))!.raw_body).toString('utf8');
    const loser = winner === a ? b : a;
    const conflicts = await conflictsOf(eventId);
    assert.equal(conflicts.length, 25);
    for (const conflict of conflicts) assert.ok(Buffer.from(conflict.raw_body).equals(Buffer.from(loser)));
    const outcomes = logLinesOf(eventId).map((l) => l.outcome);
    assert.equal(outcomes.filter((o) => o === 'accepted').length, 1);
    assert.equal(outcomes.filter((o) => o === 'conflicting_duplicate').length, 25);
    assert.equal(outcomes.filter((o) => o === 'duplicate').length, 24);
  });

  test('/metrics counts conflicting duplicates per provider (as duplicates too), starting from 0', async () => {
    const before = await scrape(service.baseUrl);
    const counted = (text: string) => sampleValue(text, 'webhook_conflicting_duplicates_total', { provider: 'stripe' });
    const duplicates = (text: string) => sampleValue(text, 'webhook_requests_total', { provider: 'stripe', outcome: 'duplicate' });
    const { eventId, chargeId } = nextIds();
    const stored = stripeBody(eventId, chargeId, 'charge.succeeded');
    for (const body of [stored, stripeBody(eventId, chargeId, 'charge.failed'), stored])
      assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
    const afterwards = await scrape(service.baseUrl);
    assert.equal(counted(afterwards)! - counted(before)!, 1);
    assert.equal(duplicates(afterwards)! - duplicates(before)!, 2);
    assert.ok(!afterwards.includes('webhook_conflicting_duplicates_total{provider="unknown"}'));
  });

  test('a stored row without a fingerprint (stored before they existed) is never judged', async () => {
    const { eventId, chargeId } = nextIds();
    assert.equal((await postStripe(service.baseUrl, stripeBody(eventId, chargeId, 'charge.succeeded'), SECRET)).status, 200);
    // As the upgrade that added fingerprints left it, and the one that added keys took it over.
    await database.sql`update webhook_inbox set fingerprint = null where event_id = ${eventId}`;
    await database.sql`update webhook_event_keys set fingerprint = null where event_id = ${eventId}`;
    assert.equal((await postStripe(service.baseUrl, stripeBody(eventId, chargeId, 'charge.refunded', { amountRefunded: 2000 }), SECRET)).status, 200);
    assert.deepEqual(await conflictsOf(eventId), []);
    assert.equal(logLinesOf(eventId)[1]!.outcome, 'duplicate');
  });

  test("an event's conflicts go with it when it is deleted (retention)", async () => {
    const { eventId, chargeId } = nextIds();
    for (const type of ['charge.succeeded', 'charge.failed'])
      assert.equal((await postStripe(service.baseUrl, stripeBody(eventId, chargeId, type), SECRET)).status, 200);
    assert.equal((await conflictsOf(eventId)).length, 1);
    await database.sql`delete from webhook_inbox where event_id = ${eventId}`;
    assert.deepEqual(await conflictsOf(eventId), []);
  });
});
