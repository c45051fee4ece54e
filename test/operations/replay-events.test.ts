import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { replayEvents } from '../../src/operations/replay-events.ts';
import { daysAgo, insertInboxRows, jobsFor, minutesAgo, useOperationsHarness } from './harness.ts';

const h = useOperationsHarness();

async function statusOf(id: number) {
  const [row] = await h.database.sql`select status, last_error from webhook_inbox where id = ${id}`;
  return { status: row!.status as string, lastError: row!.last_error as string | null };
}

const deps = () => ({ db: h.handle.db, boss: h.boss });

describe('replayEvents', () => {
  test('failed rows go back to pending with last_error cleared and one job each, in one go', async () => {
    const ids = await insertInboxRows(h.database.sql, [
      { eventId: 'evt_r1_a', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(30) },
      { eventId: 'evt_r1_b', status: 'failed', lastError: 'TypeError: boom', receivedAt: minutesAgo(20) },
    ]);
    const [other] = await insertInboxRows(h.database.sql, [
      { provider: 'asaas', eventId: 'evt_r1_other_provider', status: 'failed', lastError: 'x', receivedAt: minutesAgo(20) },
    ]);
    const result = await replayEvents(deps(), { provider: 'stripe', eventIds: ['evt_r1_a', 'evt_r1_b', 'evt_r1_other_provider'] });
    assert.equal(result.matched, 2);
    assert.equal(result.replayed, 2);
    assert.deepEqual(result.sampleEventIds, ['evt_r1_a', 'evt_r1_b'], 'oldest first');
    for (const id of ids) assert.deepEqual(await statusOf(id), { status: 'pending', lastError: null });
    assert.deepEqual((await jobsFor(h.database.sql, ids)).map((j) => j.inboxId).sort(), [...ids].sort());
    assert.deepEqual(await statusOf(other!), { status: 'failed', lastError: 'x' }, 'another provider is untouched');
  });

  test('replaying the same set twice changes nothing the second time and adds no job', async () => {
    const ids = await insertInboxRows(h.database.sql, [{ eventId: 'evt_r2', status: 'failed', lastError: 'boom', receivedAt: minutesAgo(10) }]);
    const first = await replayEvents(deps(), { provider: 'stripe', eventIds: ['evt_r2'] });
    const second = await replayEvents(deps(), { provider: 'stripe', eventIds: ['evt_r2'] });
    assert.equal(first.replayed, 1);
    assert.equal(second.matched, 0);
    assert.equal(second.replayed, 0);
    assert.equal((await jobsFor(h.database.sql, ids)).length, 1);
  });

  test('a dry run reports what would be replayed and changes nothing', async () => {
    const ids = await insertInboxRows(h.database.sql, [
      { eventId: 'evt_r3_a', status: 'failed', lastError: 'boom', receivedAt: minutesAgo(10) },
      { eventId: 'evt_r3_b', status: 'ignored', receivedAt: minutesAgo(9) },
    ]);
    const result = await replayEvents(deps(), { provider: 'stripe', statuses: ['failed', 'ignored'], eventIds: ['evt_r3_a', 'evt_r3_b'] }, { dryRun: true });
    assert.equal(result.dryRun, true);
    assert.equal(result.matched, 2);
    assert.equal(result.replayed, 0);
    assert.deepEqual(result.byStatus, { failed: 1, ignored: 1 });
    assert.deepEqual(await statusOf(ids[0]!), { status: 'failed', lastError: 'boom' });
    assert.equal((await statusOf(ids[1]!)).status, 'ignored');
    assert.equal((await jobsFor(h.database.sql, ids)).length, 0);
  });

  test('the status filter defaults to failed; ignored rows are replayed only when asked', async () => {
    const [ignored] = await insertInboxRows(h.database.sql, [{ eventId: 'evt_r4', status: 'ignored', receivedAt: minutesAgo(5) }]);
    assert.equal((await replayEvents(deps(), { provider: 'stripe', eventIds: ['evt_r4'] })).matched, 0);
    assert.equal((await replayEvents(deps(), { provider: 'stripe', statuses: ['ignored'], eventIds: ['evt_r4'] })).replayed, 1);
    assert.equal((await statusOf(ignored!)).status, 'pending');
  });

  test('since is inclusive and until exclusive, on received_at', async () => {
    const base = daysAgo(100);
    const at = (minutes: number) => new Date(base.getTime() + minutes * 60_000);
    await insertInboxRows(h.database.sql, [
      { provider: 'window', eventId: 'before', status: 'failed', receivedAt: at(0) },
      { provider: 'window', eventId: 'at-since', status: 'failed', receivedAt: at(10) },
      { provider: 'window', eventId: 'inside', status: 'failed', receivedAt: at(15) },
      { provider: 'window', eventId: 'at-until', status: 'failed', receivedAt: at(20) },
    ]);
    const result = await replayEvents(deps(), { provider: 'window', since: at(10), until: at(20) }, { dryRun: true });
    assert.deepEqual(result.sampleEventIds, ['at-since', 'inside']);
  });

  test('a large set is replayed in batches, every row exactly once', async () => {
    const rows = Array.from({ length: 7 }, (_, i) => ({
      provider: 'batch',
      eventId: `evt_b${i}`,
      status: 'failed' as const,
      lastError: 'e',
      receivedAt: minutesAgo(60 - i),
    }));
    const ids = await insertInboxRows(h.database.sql, rows);
    const result = await replayEvents(deps(), { provider: 'batch' }, { batchSize: 3 });
    assert.equal(result.replayed, 7);
    const jobs = await jobsFor(h.database.sql, ids);
    assert.equal(jobs.length, 7);
    assert.equal(new Set(jobs.map((j) => j.inboxId)).size, 7);
  });

  test('the job carries the same singleton key the receiver uses (one resource, one worker at a time)', async () => {
    const [id] = await insertInboxRows(h.database.sql, [{ eventId: 'evt_r7', resourceId: 'ch_r7', status: 'failed', receivedAt: minutesAgo(3) }]);
    await replayEvents(deps(), { provider: 'stripe', eventIds: ['evt_r7'] });
    const [job] = await h.database.sql`select singleton_key from pgboss.job where name = 'webhooks' and (data->>'inboxId')::bigint = ${id!}`;
    assert.equal(job!.singleton_key, 'stripe:ch_r7');
  });
});
