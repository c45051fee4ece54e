import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { type RunningService, startService } from '../../src/service.ts';
import { testConfig } from '../support/config.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';

const SECRET = 'whsec_conflicting_duplicates_test';
// Only the bodies carry this: a log line holding it would hold payload bytes.
const PAYLOAD_MARKER = 'conflict-payload-marker-5d1e@example.com';
const lines: string[] = [];
let database: TestDatabase;
let service: RunningService;
let baseUrl: string;
let sequence = 0;

before(async () => {
  database = await createTestDatabase();
  const capture = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  // Receiver only: the stored event stays pending, so the test sees exactly what ingest wrote.
  service = await startService({
    config: testConfig({ INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET }),
    databaseUrl: database.url,
    logger: createLogger('info', capture),
  });
  baseUrl = `http://127.0.0.1:${service.port}`;
});

after(async () => {
  await service?.stop();
  await database?.drop();
});

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
  return database.sql`select inbox_id::int as inbox_id, provider, event_id, raw_body, differences from webhook_inbox_conflicts where event_id = ${eventId} order by id`;
}

describe('a duplicate delivery that says something else (issue 11, item 2)', () => {
  test('charge.succeeded then charge.refunded under one id: both 200, the second is kept as a conflict and logged at warn', async () => {
    const { eventId, chargeId } = nextIds();
    const succeeded = stripeBody(eventId, chargeId, 'charge.succeeded');
    const refunded = stripeBody(eventId, chargeId, 'charge.refunded', { amountRefunded: 2000 });
    assert.equal((await postStripe(baseUrl, succeeded, SECRET)).status, 200);
    assert.equal((await postStripe(baseUrl, refunded, SECRET)).status, 200, 'still 200: the gateway must stop resending');

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
});
