import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/logger.ts';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe, stripeSignatureOfBytes } from '../support/stripe.ts';

// Item 1 and 3 of issue 11, each sent among 50 valid deliveries that share its batches: the
// hostile one is stored (marked lossy) or refused with a documented 4xx; the others all commit.
const SECRET = 'whsec_poison_test_secret';
const GITHUB_SECRET = 'github-poison-test-secret';
// Only the payload of the canary delivery carries it: it must never reach a log line.
// Letters and digits only: PostgreSQL's JSON parser then quotes it whole as the bad token.
const CANARY = 'payloadcanary3b9d41f0c2e8';
const now = () => Math.floor(Date.now() / 1000);
const { lines, destination } = logLineCapture();
const database = useTestDatabase();
let service: TestService;

setup(async () => {
  // A data error whose PostgreSQL report quotes the payload (in `detail` and `where`), as the
  // jsonb parser's does: raised for one event id only.
  await database.sql.unsafe(`
    create function reject_canary_event() returns trigger language plpgsql as $$
    begin
      if new.event_id like 'evt_canary%' then perform (new.payload #>> '{data,object,description}')::jsonb; end if;
      return new;
    end $$;
    create trigger reject_canary_event before insert on webhook_inbox for each row execute function reject_canary_event();`);
  service = await startTestService({
    database,
    env: { INBOX_ROLE: 'receiver', WEBHOOK_SECRET_STRIPE: SECRET, WEBHOOK_SECRET_GITHUB: GITHUB_SECRET },
    logger: createLogger('info', destination),
  });
});

/** A Stripe charge event as JSON text, with `object` fields merged in and the envelope overridden. */
function stripeBody(id: string, options: { type?: string; created?: number; object?: Record<string, unknown> } = {}): string {
  const event = JSON.parse(
    chargeEvent({ id: 'evt_placeholder', type: options.type ?? 'charge.succeeded', chargeId: `ch_${randomUUID()}`, created: options.created ?? now() }),
  );
  event.id = id;
  Object.assign(event.data.object, options.object);
  // JSON.stringify writes U+0000 as \u0000 and a lone surrogate as \ud800, as a gateway would.
  return JSON.stringify(event);
}

const postBytes = (body: Buffer) =>
  fetch(`${service.baseUrl}/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignatureOfBytes(body, SECRET) },
    body,
  });

function postGithub(body: string) {
  const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
  const headers = {
    'content-type': 'application/json',
    'x-hub-signature-256': signature,
    'x-github-event': 'issue_comment',
    'x-github-delivery': randomUUID(),
  };
  return fetch(`${service.baseUrl}/webhooks/github`, { method: 'POST', headers, body });
}

interface Answer {
  status: number;
  error?: { code: string; message: string };
}

let round = 0;
/** Sends `hostile` at once with 50 valid, distinct Stripe deliveries: every valid one must get 200 and its row. */
async function amongFiftyValid(hostile: () => Promise<Response>): Promise<Answer> {
  round += 1;
  const valid = Array.from({ length: 50 }, (_, i) => stripeBody(`evt_valid_${round}_${i}`));
  // Sent in the middle, so it lands in a batch with valid deliveries on either side of it.
  const first = valid.slice(0, 25).map((body) => postStripe(service.baseUrl, body, SECRET));
  const sent = hostile();
  const rest = valid.slice(25).map((body) => postStripe(service.baseUrl, body, SECRET));
  const [answer, ...others] = await Promise.all([sent, ...first, ...rest]);
  assert.deepEqual(
    others.map((r) => r.status),
    valid.map(() => 200),
    'every valid delivery sent with it gets 200',
  );
  const [row] = await database.sql<{ n: number }[]>`select count(*)::int as n from webhook_inbox where event_id like ${`evt_valid_${round}_%`}`;
  assert.equal(row!.n, 50, 'and every one of them is stored');
  const json = (await answer!.json()) as { error?: Answer['error'] };
  return { status: answer!.status, error: json.error };
}

async function storedBy(rawBody: Buffer) {
  return database.sql<{ event_id: string; payload_lossy: boolean; payload: unknown; raw_body: Uint8Array }[]>`
    select event_id, payload_lossy, payload, raw_body from webhook_inbox where raw_body = ${rawBody}`;
}

/** Stored exactly once: raw bytes identical, payload marked as altered (or not). */
async function assertStored(answer: Answer, body: Buffer, lossy: boolean) {
  assert.equal(answer.status, 200, `answered ${answer.status} ${JSON.stringify(answer.error)}`);
  const rows = await storedBy(body);
  assert.equal(rows.length, 1);
  assert.ok(Buffer.from(rows[0]!.raw_body).equals(body), 'raw_body is the bytes that were sent');
  assert.equal(rows[0]!.payload_lossy, lossy, `payload_lossy ${lossy}`);
  return rows[0]!;
}

/** Refused with a documented code and a generic message; nothing stored. */
async function assertRefused(answer: Answer, body: Buffer, code: string) {
  assert.equal(answer.status, 400, `answered ${answer.status} ${JSON.stringify(answer.error)}`);
  assert.equal(answer.error?.code, code);
  assert.doesNotMatch(answer.error!.message, /postgres|sql|syntax|byte sequence|escape/i, 'no driver text in the answer');
  assert.equal((await storedBy(body)).length, 0, 'nothing stored');
}

const send = (body: string) => amongFiftyValid(() => postBytes(Buffer.from(body)));

describe('a genuine event PostgreSQL cannot hold exactly is stored, its payload marked lossy', () => {
  test('"a\\u0000b" in a string: 200, raw bytes kept, payload holds U+FFFD instead', async () => {
    const body = stripeBody('evt_nul_string', { object: { description: 'a\u0000b' } });
    const row = await assertStored(await send(body), Buffer.from(body), true);
    assert.equal((row.payload as { data: { object: { description: string } } }).data.object.description, 'a\uFFFDb');
    // inboxctl shows the mark, and --raw still gives the exact bytes.
    const env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
    assert.match((await runInboxctl(['show', 'stripe', 'evt_nul_string'], env)).out, /payload\s+LOSSY: jsonb could not hold the body as sent/);
    assert.equal((await runInboxctl(['show', 'stripe', 'evt_nul_string', '--json'], env)).json().payloadLossy, true);
    assert.ok((await runInboxctl(['show', 'stripe', 'evt_nul_string', '--raw'], env)).stdout.equals(Buffer.from(body)));
  });

  test('\\u0000 in a GitHub comment among 50 Stripe deliveries', async () => {
    const body = JSON.stringify({ action: 'created', comment: { id: 1, body: 'looks good\u0000' }, repository: { full_name: 'octo/poison' } });
    await assertStored(await amongFiftyValid(() => postGithub(body)), Buffer.from(body), true);
  });

  test('\\u0000 in an object key', async () => {
    const body = stripeBody('evt_nul_key', { object: { metadata: { 'order\u0000id': '42' } } });
    await assertStored(await send(body), Buffer.from(body), true);
  });

  test('a lone surrogate "\\ud800" in the payload', async () => {
    const body = stripeBody('evt_lone_surrogate', { object: { description: 'x\ud800y' } });
    const row = await assertStored(await send(body), Buffer.from(body), true);
    assert.equal((row.payload as { data: { object: { description: string } } }).data.object.description, 'x\uFFFDy');
  });

  test('a number beyond a double (1e400): kept as its digits, not turned into null', async () => {
    const body = stripeBody('evt_huge_number', { object: { fee: 7 } }).replace('"fee":7', '"fee":1e400');
    const row = await assertStored(await send(body), Buffer.from(body), true);
    assert.equal((row.payload as { data: { object: { fee: unknown } } }).data.object.fee, '1e400');
  });

  test('an id with a real U+FFFD in a valid UTF-8 body is an ordinary id', async () => {
    const body = stripeBody('evt_replacement_\uFFFD');
    const row = await assertStored(await send(body), Buffer.from(body), false);
    assert.equal(row.event_id, 'evt_replacement_\uFFFD');
  });

  test('nesting at the documented limit (512 levels) is stored unaltered', async () => {
    const body = stripeBody('evt_deep_512', { object: { deep: 0 } }).replace('"deep":0', `"deep":${'['.repeat(509)}${']'.repeat(509)}`);
    await assertStored(await send(body), Buffer.from(body), false);
  });

  test('the last second of year 9999 is a storable time', async () => {
    const body = stripeBody('evt_year_9999', { created: 253_402_300_799 });
    await assertStored(await send(body), Buffer.from(body), false);
  });
});

describe('what cannot be an event is refused (400) before it joins a batch', () => {
  test('\\u0000 in the event id, or in its type', async () => {
    const nulId = stripeBody('evt_nul\u0000id');
    await assertRefused(await send(nulId), Buffer.from(nulId), 'event_identifier_invalid');
    const nulType = stripeBody('evt_nul_type', { type: 'charge.succeeded\u0000' });
    await assertRefused(await send(nulType), Buffer.from(nulType), 'event_identifier_invalid');
  });

  test('a lone surrogate in the event id', async () => {
    const body = stripeBody('evt_\ud800');
    await assertRefused(await send(body), Buffer.from(body), 'event_identifier_invalid');
  });

  test('ids that differ only in invalid UTF-8 bytes (…_Z\\xff, …_Z\\xfe) are both refused, neither taken for the other', async () => {
    for (const byte of [0xff, 0xfe]) {
      const [head, tail] = stripeBody('evt_invalid_utf8_Z@').split('@');
      const body = Buffer.concat([Buffer.from(head!), Buffer.from([byte]), Buffer.from(tail!)]);
      await assertRefused(await amongFiftyValid(() => postBytes(body)), body, 'event_identifier_invalid');
    }
  });

  test('nesting past 512 levels (and 5,000)', async () => {
    for (const depth of [513, 5000]) {
      const body = stripeBody(`evt_deep_${depth}`, { object: { deep: 0 } }).replace('"deep":0', `"deep":${'['.repeat(depth - 3)}${']'.repeat(depth - 3)}`);
      await assertRefused(await send(body), Buffer.from(body), 'payload_too_deep');
    }
  });

  test('created in the year 10000 (253402300800)', async () => {
    const body = stripeBody('evt_year_10000', { created: 253_402_300_800 });
    await assertRefused(await send(body), Buffer.from(body), 'occurred_at_out_of_range');
  });
});

describe('a delivery PostgreSQL still refuses fails alone, and says nothing of its payload', () => {
  const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

  test('400 event_unstorable for it, 200 for the 50 beside it; one log line, naming its provider and event id, no payload byte', async () => {
    const body = stripeBody('evt_canary_1', { object: { description: `["not JSON" ${CANARY}` } });
    const seen = lines.length;
    await assertRefused(await send(body), Buffer.from(body), 'event_unstorable');
    const logged = lines.slice(seen);
    assert.deepEqual(
      logged.filter((line) => line.includes(CANARY)),
      [],
      'the payload canary is in no log line',
    );
    const failures = parsed()
      .slice(seen)
      .filter((entry) => (entry.level as number) >= 40 || entry.msg === 'delivery rejected');
    assert.equal(failures.length, 1, `one line about the failed delivery:\n${logged.join('\n')}`);
    assert.equal(failures[0]!.provider, 'stripe');
    assert.equal(failures[0]!.eventId, 'evt_canary_1');
    const err = failures[0]!.err as Record<string, unknown> | undefined;
    assert.equal(err?.code, '22P02', 'the SQLSTATE is kept for the operator');
    for (const field of ['where', 'detail', 'query', 'parameters']) assert.equal(err?.[field], undefined, `no ${field}`);
  });
});
