import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { insertInboxRows } from '../operations/harness.ts';
import { runInboxctl } from './run-inboxctl.ts';

const database = useTestDatabase();
let env: Record<string, string>;
const now = new Date();
const ago = (ms: number) => new Date(now.getTime() - ms);
const after_ = (d: Date, ms: number) => new Date(d.getTime() + ms);
const H = 3_600_000;

// A known fixture: the numbers below are worked out by hand from it.
const stripeRaw = Buffer.from('{"id":"s_p1", "type":"charge.succeeded","data":{"object":{"id":"ch_1","amount":9007199254740993}}}');

setup(async () => {
  env = { DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: 'whsec_cli_stats' };
  const r = (hours: number) => ago(hours * H);
  await insertInboxRows(database.sql, [
    {
      provider: 'stripe',
      eventId: 's_p1',
      status: 'processed',
      receivedAt: r(1),
      occurredAt: after_(r(1), -1000),
      processedAt: after_(r(1), 2000),
      attempts: 1,
      rawBody: stripeRaw,
    },
    { provider: 'stripe', eventId: 's_p2', status: 'processed', receivedAt: r(2), occurredAt: after_(r(2), -1000), processedAt: after_(r(2), 4000) },
    { provider: 'stripe', eventId: 's_p3', status: 'processed', receivedAt: r(3), occurredAt: after_(r(3), -3000), processedAt: after_(r(3), 6000) },
    { provider: 'stripe', eventId: 's_i1', status: 'ignored', receivedAt: r(4), processedAt: r(4) },
    { provider: 'stripe', eventId: 's_f1', status: 'failed', receivedAt: r(5), attempts: 10, lastError: 'TypeError: amount is undefined\n    at handler' },
    { provider: 'stripe', eventId: 's_pending', status: 'pending', receivedAt: ago(20 * 60_000) },
    { provider: 'stripe', eventId: 's_prev_i', status: 'ignored', receivedAt: r(30) },
    { provider: 'stripe', eventId: 's_prev_p', status: 'processed', receivedAt: r(30), processedAt: after_(r(30), 1000) },
    { provider: 'stripe', eventId: 's_old1', status: 'processed', receivedAt: r(40 * 24), processedAt: r(40 * 24) },
    { provider: 'stripe', eventId: 's_old2', status: 'processed', receivedAt: r(40 * 24), processedAt: r(40 * 24) },
    { provider: 'asaas', eventId: 'a_p1', status: 'processed', receivedAt: r(1), processedAt: after_(r(1), 1000) },
    { provider: 'asaas', eventId: 'a_p2', status: 'processed', receivedAt: r(1), processedAt: after_(r(1), 1000) },
    { provider: 'asaas', eventId: 'a_i1', status: 'ignored', receivedAt: r(2) },
    { provider: 'asaas', eventId: 'a_i2', status: 'ignored', receivedAt: r(2) },
    { provider: 'late', eventId: 'l_pending', status: 'pending', receivedAt: ago(20 * 60_000) },
  ]);
});

describe('inboxctl stats', () => {
  test('--json numbers match the fixture; exit 1 because an event failed', async () => {
    const run = await runInboxctl(['stats', '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const stats = run.json();
    const byName = Object.fromEntries(stats.providers.map((p: any) => [p.provider, p]));
    assert.deepEqual(byName.stripe.counts, { pending: 1, processed: 3, ignored: 1, failed: 1 });
    assert.equal(byName.stripe.total, 6);
    assert.equal(byName.stripe.ignoredRatio, 1 / 6);
    assert.equal(byName.stripe.ignoredRatioBefore, 0.5, 'the 24 h before the window: one ignored of two');
    assert.deepEqual(byName.asaas.counts, { pending: 0, processed: 2, ignored: 2, failed: 0 });
    assert.equal(byName.asaas.ignoredRatio, 0.5);
    assert.equal(byName.asaas.ignoredRatioBefore, null);
    assert.deepEqual(stats.totals, { pending: 2, processed: 5, ignored: 3, failed: 1 });
    assert.equal(stats.failed, 1);
    const [failedRow] = await database.sql`select id from webhook_inbox where event_id = 's_f1'`;
    assert.deepEqual(stats.topErrors, [
      {
        provider: 'stripe',
        error: 'TypeError: amount is undefined\n    at handler',
        count: 1,
        example: { id: Number(failedRow!.id), eventId: 's_f1', error: 'TypeError: amount is undefined\n    at handler' },
      },
    ]);
    assert.ok(Math.abs(stats.oldestPendingAgeSeconds - 1200) < 120, `oldest pending about 20 minutes old, got ${stats.oldestPendingAgeSeconds}`);
    // Settled (processed or ignored, with a settling time): s_i1 settled at once, so processing lags
    // 0, 1, 1, 2, 4, 6 s and ingest lags 0, 0, 0, 1, 1, 3 s (percentile_cont interpolates).
    assert.equal(stats.lag.sampleSize, 6);
    assert.deepEqual(stats.lag.processing, { p50: 1.5, p95: 5.5, p99: 5.9, max: 6 });
    assert.deepEqual(stats.lag.ingest, { p50: 0.5, p95: 2.5, p99: 2.9, max: 3 });
    assert.equal(stats.alerts.length, 2, 'failed, and pending older than the 10 m default');
  });

  test('--since all counts every row; --provider narrows to one', async () => {
    const run = await runInboxctl(['stats', '--since', 'all', '--provider', 'stripe', '--json'], env);
    const stats = run.json();
    assert.deepEqual(
      stats.providers.map((p: any) => p.provider),
      ['stripe'],
    );
    assert.deepEqual(stats.totals, { pending: 1, processed: 6, ignored: 2, failed: 1 });
  });

  test('--since far in the past answers: the window before it is clamped to what PostgreSQL takes', async () => {
    // Found by a probe: the comparison window [2·since − now, since) left year 1 (a "-002025-…"
    // ISO string PostgreSQL refuses), so these dates failed with exit 4.
    const all = (await runInboxctl(['stats', '--since', 'all', '--json'], env)).json();
    for (const since of ['0001-01-01', '1000-01-01']) {
      const run = await runInboxctl(['stats', '--since', since, '--json'], env);
      assert.equal(run.code, 1, `--since ${since}: ${run.stderr}`);
      assert.deepEqual(run.json().totals, all.totals, `--since ${since} covers every row`);
    }
  });

  test('--since in the future is exit 2 naming the time, as for backfill: an empty window would read as a quiet one', async () => {
    // Found by a probe: 9999-12-31 answered "No events." for a window nothing can be received in.
    const future = await runInboxctl(['stats', '--since', '9999-12-31T23:59:59Z'], env);
    assert.equal(future.code, 2, future.out);
    assert.equal(future.out, '', 'no report for a window that has not begun');
    assert.match(future.stderr, /--since: 9999-12-31T23:59:59\.000Z is in the future; give a time in the past/);
    const json = await runInboxctl(['stats', '--since', '9999-12-31T23:59:59Z', '--json'], env);
    assert.equal(json.code, 2);
    assert.equal(json.json().error.code, 'usage', 'an error object, not totals of an empty window');
  });

  test('a provider with nothing failed and nothing pending exits 0 and says OK', async () => {
    const run = await runInboxctl(['stats', '--provider', 'asaas'], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.out, /^asaas\s+0\s+2\s+2\s+0\s+4\s+50\.0%/m);
    assert.match(run.out, /^OK: nothing failed, nothing pending too long\.$/m);
  });

  test('pending older than --max-pending-age is an alert (exit 1); a looser threshold is not', async () => {
    const strict = await runInboxctl(['stats', '--provider', 'late'], env);
    assert.equal(strict.code, 1);
    assert.match(strict.out, /ALERT: the oldest pending event is \d+ s old \(threshold 600 s\)/);
    const loose = await runInboxctl(['stats', '--provider', 'late', '--max-pending-age', '1h'], env);
    assert.equal(loose.code, 0, loose.out);
  });
});

describe('inboxctl show', () => {
  test('prints status, attempts, error and payload; --json keeps a 64-bit id exact', async () => {
    const human = await runInboxctl(['show', 'stripe', 's_f1'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.out, /status\s+failed/);
    assert.match(human.out, /attempts\s+10/);
    assert.match(human.out, /last error\s+TypeError: amount is undefined/);
    const json = await runInboxctl(['show', 'stripe', 's_p1', '--json'], env);
    assert.match(json.out, /"amount": 9007199254740993/);
    assert.equal(Buffer.from(json.json().rawBodyBase64, 'base64').equals(stripeRaw), true);
  });

  test('--raw prints the stored bytes exactly', async () => {
    const run = await runInboxctl(['show', 'stripe', 's_p1', '--raw'], env);
    assert.equal(run.code, 0);
    assert.ok(run.stdout.equals(stripeRaw));
  });

  // Found by a probe: the README sends operators to `inboxctl show <inbox_id>` (a payment event's
  // cause, Partitions), but show took only <provider> <eventId>: a missing-argument error, exit 2.
  test('show <inbox id> shows the event of that id, as show <provider> <event id> does', async () => {
    const [row] = await database.sql`select id from webhook_inbox where event_id = 's_f1'`;
    const byId = await runInboxctl(['show', String(row!.id)], env);
    assert.equal(byId.code, 0, byId.stderr);
    assert.match(byId.out, new RegExp(`^stripe s_f1   inbox id ${row!.id}$`, 'm'));
    assert.match(byId.out, /status\s+failed/);
    assert.equal((await runInboxctl(['show', String(row!.id), '--json'], env)).json().eventId, 's_f1');
    const missing = await runInboxctl(['show', '999999'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no event with inbox id 999999/);
    const notAnId = await runInboxctl(['show', 'stripe'], env);
    assert.equal(notAnId.code, 2);
    assert.equal(notAnId.stderr.trimEnd().split('\n').length, 1, notAnId.stderr);
    assert.match(notAnId.stderr, /"stripe" is not an inbox id/);
  });

  test('an unknown event exits 1 and says where to look', async () => {
    const run = await runInboxctl(['show', 'stripe', 'evt_nope'], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /no event "evt_nope" from provider "stripe"/);
  });
});

describe('inboxctl exit codes', () => {
  test('2 for a usage or configuration error, 3 for an unreachable database', async () => {
    assert.equal((await runInboxctl(['stats', '--since', 'yesterday'], env)).code, 2);
    assert.equal((await runInboxctl(['replay', 'stripe', '--status', 'processed'], env)).code, 2);
    const badConfig = await runInboxctl(['stats'], { ...env, WORKER_MAX_ATTEMPTS: 'many' });
    assert.equal(badConfig.code, 2);
    assert.match(badConfig.stderr, /WORKER_MAX_ATTEMPTS/);
    const down = await runInboxctl(['stats'], { ...env, DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:9/inbox' });
    assert.equal(down.code, 3);
    assert.match(down.stderr, /ECONNREFUSED/);
  });
});
