import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { drizzleExecutor } from '../../src/db/client.ts';
import { SWEEP_QUEUE, ensureOperationsQueues } from '../../src/operations/cron.ts';
import { sweepPendingEvents } from '../../src/operations/sweep-pending-events.ts';
import { enqueueWebhookJobs } from '../../src/queue/enqueue.ts';
import { testConfig } from '../support/config.ts';
import { waitFor } from '../support/wait.ts';
import { insertInboxRows, jobsFor, minutesAgo, startCronInstance, useOperationsHarness } from './harness.ts';

const h = useOperationsHarness();

const sweep = (limit = 500) => sweepPendingEvents({ db: h.handle.db, boss: h.boss, clock: () => new Date() }, { olderThanSeconds: 300, limit });

async function clearPending() {
  await h.database.sql`update webhook_inbox set status = 'processed' where status = 'pending'`;
}

describe('sweepPendingEvents', () => {
  test('re-queues a pending row older than the limit that has no job, and nothing else', async () => {
    await clearPending();
    const [lost, young, done, withJob] = await insertInboxRows(h.database.sql, [
      { eventId: 'sw1_lost', status: 'pending', receivedAt: minutesAgo(6) },
      { eventId: 'sw1_young', status: 'pending', receivedAt: minutesAgo(4) },
      { eventId: 'sw1_done', status: 'processed', receivedAt: minutesAgo(60) },
      { eventId: 'sw1_has_job', resourceId: 'ch_shared', status: 'pending', receivedAt: minutesAgo(10) },
    ]);
    await h.handle.db.transaction((tx) =>
      enqueueWebhookJobs(h.boss, drizzleExecutor(tx), [
        { id: withJob!, provider: 'stripe', eventId: 'sw1_has_job', resourceId: 'ch_shared', receivedAt: minutesAgo(10) },
      ]),
    );

    const result = await sweep();
    assert.equal(result.considered, 2, 'the two pending rows older than 5 minutes');
    assert.equal(result.requeued, 1);
    assert.deepEqual(await jobsFor(h.database.sql, [lost!]), [{ inboxId: lost!, state: 'created' }]);
    assert.equal((await jobsFor(h.database.sql, [young!, done!])).length, 0);
    assert.equal((await jobsFor(h.database.sql, [withJob!])).length, 1, 'a row whose job is alive gets no second job');
  });

  test('sweeping again before the job ran adds no second job', async () => {
    await clearPending();
    const [lost] = await insertInboxRows(h.database.sql, [{ eventId: 'sw2_lost', status: 'pending', receivedAt: minutesAgo(30) }]);
    assert.equal((await sweep()).requeued, 1);
    assert.equal((await sweep()).requeued, 0);
    assert.equal((await jobsFor(h.database.sql, [lost!])).length, 1);
  });

  test('takes the oldest first, at most `limit` per run', async () => {
    await clearPending();
    const ids = await insertInboxRows(h.database.sql, [
      { eventId: 'sw3_c', status: 'pending', receivedAt: minutesAgo(10) },
      { eventId: 'sw3_a', status: 'pending', receivedAt: minutesAgo(30) },
      { eventId: 'sw3_b', status: 'pending', receivedAt: minutesAgo(20) },
    ]);
    const result = await sweep(2);
    assert.equal(result.requeued, 2);
    assert.deepEqual(
      result.oldestReceivedAt?.getTime(),
      (await h.database.sql`select received_at from webhook_inbox where event_id = 'sw3_a'`)[0]!.received_at.getTime(),
    );
    assert.deepEqual((await jobsFor(h.database.sql, ids)).map((j) => j.inboxId).sort(), [ids[1]!, ids[2]!].sort());
  });

  test('a row whose job failed for good and sits in the dead-letter queue is not re-queued behind its back', async () => {
    await clearPending();
    const [id] = await insertInboxRows(h.database.sql, [{ eventId: 'sw4', resourceId: 'ch_sw4', status: 'pending', receivedAt: minutesAgo(90) }]);
    await h.boss.send('webhooks-dead-letter', { inboxId: id }, { singletonKey: 'stripe:ch_sw4' });
    assert.equal((await sweep()).requeued, 0);
  });
});

describe('the sweep queue', () => {
  test('is exclusive: a tick that arrives while a sweep is queued is dropped', async () => {
    await ensureOperationsQueues(h.boss);
    const first = await h.boss.send(SWEEP_QUEUE, {});
    const second = await h.boss.send(SWEEP_QUEUE, {});
    assert.ok(first);
    assert.equal(second, null);
    await h.boss.deleteJob(SWEEP_QUEUE, first);
  });
});

describe('the sweeper on pg-boss cron, two instances', () => {
  test('one sweep per tick, and it re-queues the lost row', async () => {
    await clearPending();
    await h.database.sql`delete from pgboss.job where name = ${SWEEP_QUEUE}`;
    const [lost] = await insertInboxRows(h.database.sql, [{ eventId: 'sw_cron_lost', status: 'pending', receivedAt: minutesAgo(15) }]);
    const config = testConfig({});
    // Two instances, each passing its cron every second; only one may file each occurrence. Every
    // minute: a schedule whose last occurrence is under a minute old fires at once.
    for (let i = 0; i < 2; i++) await startCronInstance(h, config, { sweepCron: '* * * * *', retentionCron: '0 0 1 1 *' });
    const completed = await waitFor(
      async () => {
        const rows = await h.database.sql`select created_on from pgboss.job where name = ${SWEEP_QUEUE} and state = 'completed'`;
        return rows.length > 0 ? (rows[0]!.created_on as Date) : undefined;
      },
      { message: 'a completed sweep', timeoutMs: 30_000 },
    );
    assert.equal((await jobsFor(h.database.sql, [lost!])).length, 1, 'the lost row got its job back');
    // Let both instances run several more cron passes over the same occurrence.
    await waitFor(
      async () => {
        const [v] = await h.database.sql`select cron_on from pgboss.version`;
        return (v!.cron_on as Date).getTime() > completed.getTime() + 3000;
      },
      { message: 'three more cron passes', timeoutMs: 30_000, intervalMs: 200 },
    );
    const [jobs] = await h.database.sql`select count(*)::int as n from pgboss.job where name = ${SWEEP_QUEUE}`;
    const [ticks] = await h.database.sql`
      select count(distinct data->>'slot')::int as n from pgboss.job where name = '__pgboss__send-it' and data->>'name' = ${SWEEP_QUEUE}`;
    assert.ok(jobs!.n >= 1);
    // Equal unless a minute boundary passed while a sweep was still running (that tick is dropped).
    assert.ok(jobs!.n <= ticks!.n, `${jobs!.n} sweep jobs for ${ticks!.n} cron occurrences: at most one per occurrence, with two instances scheduling`);
  });
});
