import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, stripeSignature } from '../support/stripe.ts';
import { freePort } from '../support/free-port.ts';
import { type RawOutcome, rawRequest } from './support/raw-http.ts';
import { type ServiceProcess, spawnService } from './support/service-process.ts';

const SECRET = 'whsec_fault_hostile_secret';
const MAX_BODY_BYTES = 64 * 1024;
/** The only answers a hostile body may get. */
const REJECTIONS = new Set<RawOutcome>([400, 401, 404, 413]);
const RUNS = 60;

const database = useTestDatabase();
let service: ServiceProcess;
const outcomes: RawOutcome[] = [];

setup(async () => {
  service = await spawnService({
    port: await freePort(),
    env: { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET, INBOX_ROLE: 'receiver', MAX_BODY_BYTES: String(MAX_BODY_BYTES) },
  });
  database.onTeardown(() => service.stop());
});

async function send(options: Partial<Parameters<typeof rawRequest>[0]> & { body?: Buffer; signature?: string | null }): Promise<RawOutcome> {
  const body = options.body ?? Buffer.alloc(0);
  const headers: Record<string, string | number> = { 'content-type': 'application/json', ...options.headers };
  if (options.signature !== null) headers['stripe-signature'] = options.signature ?? stripeSignature(body.toString('latin1'), SECRET);
  if (!options.chunks && headers['transfer-encoding'] === undefined) headers['content-length'] = body.length;
  const outcome = await rawRequest({
    port: service.port,
    path: options.path ?? '/webhooks/stripe',
    headers,
    chunks: options.chunks ?? [body],
    delayMs: options.delayMs,
    abortAfterChunks: options.abortAfterChunks,
  });
  outcomes.push(outcome);
  return outcome;
}

function validEvent(id: string): string {
  return chargeEvent({ id, type: 'charge.succeeded', chargeId: `ch_${id}`, created: Math.floor(Date.now() / 1000) });
}

describe('hostile bodies get 400/401/404/413, never a 500, never a row', () => {
  test('random bytes, validly signed or not, to a known or unknown provider', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), fc.boolean(), fc.constantFrom('stripe', 'unknown', 'stripe%00'), async (bytes, signed, provider) => {
        const body = Buffer.from(bytes);
        const outcome = await send({ body, path: `/webhooks/${provider}`, signature: signed ? undefined : 't=1,v1=00' });
        assert.ok(REJECTIONS.has(outcome), `answered ${outcome}`);
      }),
      { numRuns: RUNS },
    );
  });

  test('any JSON value, validly signed: not an event this driver understands (400)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.json({ maxDepth: 3 }), async (json) => {
        const outcome = await send({ body: Buffer.from(json) });
        assert.equal(outcome, 400);
      }),
      { numRuns: RUNS },
    );
  });

  test('a real event truncated anywhere: signed as truncated → 400; signed whole, sent truncated → 401', async () => {
    const whole = validEvent('evt_hostile_truncated');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: whole.length - 1 }), async (cut) => {
        const truncated = Buffer.from(whole.slice(0, cut));
        assert.equal(await send({ body: truncated }), 400);
        assert.equal(await send({ body: truncated, signature: stripeSignature(whole, SECRET) }), 401);
      }),
      { numRuns: RUNS / 2 },
    );
  });

  test('a sender that dies mid-body (fewer bytes than its Content-Length) gets no 200 and leaves no row', async () => {
    const whole = Buffer.from(validEvent('evt_hostile_aborted'));
    const outcome = await send({
      body: whole,
      chunks: [whole.subarray(0, whole.length / 2)],
      headers: { 'content-length': whole.length },
      abortAfterChunks: true,
    });
    assert.notEqual(outcome, 200);
  });

  test('a slow drip, one byte at a time, of a body whose signature does not match → 401', async () => {
    const body = Buffer.from(validEvent('evt_hostile_drip'));
    const chunks = [...body.subarray(0, 120)].map((byte) => Buffer.from([byte]));
    chunks.push(body.subarray(120));
    assert.equal(
      await send({ body, chunks, delayMs: 5, signature: stripeSignature('{"another":"body"}', SECRET), headers: { 'content-length': body.length } }),
      401,
    );
  });

  test('oversized bodies → 413: with a Content-Length, and chunked without one (never buffered: peak memory stays flat)', async (t) => {
    const peakBefore = service.peakRssBytes();
    assert.equal(await send({ body: Buffer.alloc(MAX_BODY_BYTES + 1, 0x20) }), 413);
    // 5 × 32 MiB offered, chunked, no Content-Length. The server answers 413 once the limit is
    // crossed and hangs up. On a loaded machine the sender's next write can meet the closed
    // connection before it reads that answer: a hang-up is then all it sees, which is still a
    // refusal (never a 200, never a 500, no row).
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    for (let i = 0; i < 5; i += 1) {
      const chunks = Array.from({ length: 512 }, () => chunk);
      const outcome = await send({ chunks, delayMs: 1, headers: { 'transfer-encoding': 'chunked' }, signature: 't=1,v1=00' });
      assert.ok(outcome === 413 || outcome === 'no_response', `oversized chunked body answered ${outcome}`);
    }
    // And dripped: the limit is crossed slowly.
    const drip = Array.from({ length: 20 }, () => Buffer.alloc(MAX_BODY_BYTES / 8, 0x20));
    assert.equal(await send({ chunks: drip, delayMs: 5, headers: { 'transfer-encoding': 'chunked' } }), 413);
    const growth = service.peakRssBytes() - peakBefore;
    t.diagnostic(`peak RSS ${Math.round(peakBefore / 2 ** 20)} MiB before, ${Math.round(growth / 2 ** 20)} MiB more after the oversized bodies`);
    assert.ok(growth < 32 * 2 ** 20, `peak memory grew by ${Math.round(growth / 2 ** 20)} MiB`);
  });
});

describe('signature mutations → 401', () => {
  const body = validEvent('evt_hostile_signed');
  const header = () => stripeSignature(body, SECRET);

  test('any one character of the signature changed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.constantFrom(...'0123456789abcdef'), async (position, replacement) => {
        const original = header();
        const start = original.indexOf('v1=') + 3;
        const index = start + (position % (original.length - start));
        fc.pre(original[index] !== replacement);
        const mutated = original.slice(0, index) + replacement + original.slice(index + 1);
        assert.equal(await send({ body: Buffer.from(body), signature: mutated }), 401);
      }),
      { numRuns: RUNS },
    );
  });

  test('any one byte of the body changed after signing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.integer({ min: 0, max: 255 }), async (position, byte) => {
        const bytes = Buffer.from(body);
        const index = position % bytes.length;
        fc.pre(bytes[index] !== byte);
        const signature = header();
        bytes[index] = byte;
        assert.equal(await send({ body: bytes, signature }), 401);
      }),
      { numRuns: RUNS },
    );
  });

  test('missing, emptied, v0-only, wrong secret, shifted or stale timestamp', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = header();
    const v1 = good.slice(good.indexOf('v1='));
    const cases: Record<string, string | null> = {
      missing: null,
      empty: '',
      'v0 only': good.replace('v1=', 'v0='),
      'no timestamp': v1,
      'timestamp shifted by 1 s': good.replace(/t=(\d+)/, (_, t: string) => `t=${Number(t) + 1}`),
      'wrong secret': stripeSignature(body, 'whsec_someone_else'),
      'stale (10 min old)': stripeSignature(body, SECRET, now - 600),
      'from the future (10 min)': stripeSignature(body, SECRET, now + 600),
      'truncated signature': good.slice(0, -2),
    };
    for (const [name, signature] of Object.entries(cases)) {
      assert.equal(await send({ body: Buffer.from(body), signature }), 401, name);
    }
  });
});

describe('after all of it', () => {
  const abortedReads = () => service.linesIncluding('"level":50').filter((line) => line.includes('"message":"aborted"'));

  test('no row was stored, no answer was outside 400/401/404/413, nothing else was logged as an error', async () => {
    const [row] = await database.sql<{ n: number }[]>`select count(*)::int as n from webhook_inbox`;
    assert.equal(row!.n, 0);
    const unexpected = outcomes.filter((o) => !REJECTIONS.has(o) && o !== 'no_response');
    assert.deepEqual(unexpected, []);
    assert.ok(outcomes.includes('no_response'), 'the sender that died mid-body went unanswered');
    const errors = service.linesIncluding('"level":50').filter((line) => !abortedReads().includes(line));
    assert.deepEqual(errors, [], 'the service logged no other error');
  });

  test('a sender that dies mid-body is not an unexpected error (400 body_incomplete, logged at info)', () => {
    assert.deepEqual(abortedReads(), []);
  });
});
