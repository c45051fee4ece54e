import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createHandlerRegistry } from '../../src/processing/handlers.ts';
import { createArchiveWriter } from '../../src/operations/archive.ts';
import { type RetentionPolicy, applyRetention } from '../../src/operations/retention.ts';
import { WEBHOOKS_QUEUE } from '../../src/queue/queues.ts';
import { createApplyCounter } from '../support/apply-counter.ts';
import { useTestDatabase } from '../support/database.ts';
import { useService } from '../support/service.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'whsec_key_retention_test';
const DAY_MS = 86_400_000;
const database = useTestDatabase();
const applies = createApplyCounter();
const service = useService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET }, handlers: createHandlerRegistry([applies.handler()]) });
const stripe: RetentionPolicy = { name: 'stripe', retentionDays: 30, keyRetentionDays: 400, resendWindowDays: 3, unknownPayment: 'create' };
let archiveDir: string;

before(async () => {
  archiveDir = await mkdtemp(path.join(tmpdir(), 'inbox-key-retention-'));
});

after(async () => {
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
});

async function retention(now: Date) {
  const archive = createArchiveWriter({ clock: () => now });
  return (await applyRetention({ db: service.database.db, archive }, { providers: new Map([['stripe', stripe]]), now, archiveDir })).providers;
}

async function deliverAndProcess(eventId: string, chargeId: string): Promise<string> {
  const body = chargeEvent({ id: eventId, type: 'charge.succeeded', chargeId, created: Math.floor(Date.now() / 1000) });
  assert.equal((await postStripe(service.baseUrl, body, SECRET)).status, 200);
  await waitFor(
    async () => {
      const [row] = await database.sql`select status from webhook_inbox where provider = 'stripe' and event_id = ${eventId}`;
      return row?.status === 'processed';
    },
    { message: `${eventId} processed`, timeoutMs: 30_000 },
  );
  return body;
}

/** Both tiers age by `days`: the payload row and its key, as if received that long ago. */
async function age(eventId: string, days: number) {
  await database.sql`update webhook_inbox set received_at = received_at - make_interval(days => ${days}) where provider = 'stripe' and event_id = ${eventId}`;
  await database.sql`update webhook_event_keys set received_at = received_at - make_interval(days => ${days}) where provider = 'stripe' and event_id = ${eventId}`;
}

/** The event's rows and key, every job ever queued for processing, and the payment transitions the stored event caused. */
const counts = async (eventId: string, inboxId: number) => {
  const [row] = await database.sql`
    select (select count(*)::int from webhook_inbox where event_id = ${eventId}) as rows,
           (select count(*)::int from webhook_event_keys where event_id = ${eventId}) as keys,
           (select count(*)::int from pgboss.job where name = ${WEBHOOKS_QUEUE}) as jobs,
           (select count(*)::int from payment_transitions where inbox_id = ${inboxId}) as transitions,
           (select count(*)::int from payment_transitions) as "allTransitions"`;
  return row as unknown as { rows: number; keys: number; jobs: number; transitions: number; allTransitions: number };
};

describe('tiered retention: payloads go, dedupe keys stay (issue 15)', () => {
  test('a resend after its payload was purged gets 200 as a duplicate: no new row, no new job, no second effect', async () => {
    const [eventId, chargeId] = ['evt_resent_after_purge', 'ch_resent_after_purge'];
    const body = await deliverAndProcess(eventId, chargeId);
    const [stored] = await database.sql`select id::int as id from webhook_inbox where event_id = ${eventId}`;
    const before = await counts(eventId, stored!.id);
    assert.deepEqual({ rows: before.rows, keys: before.keys }, { rows: 1, keys: 1 });
    assert.ok(before.transitions > 0, 'the first delivery had its effect');
    assert.equal(applies.appliedOf(eventId), 1);

    await age(eventId, 60);
    const [result] = await retention(new Date());
    assert.equal(result!.deleted, 1, 'the payload went (60 days > retentionDays 30)');
    assert.equal(result!.keysDeleted, 0, 'its key stays (60 days < keyRetentionDays 400)');

    const resend = await postStripe(service.baseUrl, body, SECRET);
    assert.equal(resend.status, 200);
    assert.deepEqual(await resend.json(), { received: true });
    const afterResend = await counts(eventId, stored!.id);
    assert.deepEqual(afterResend, { ...before, rows: 0 }, 'no new row, no new job, no new transition');
    // A worker would have had every chance: the next delivery is processed, the resend never was.
    await deliverAndProcess('evt_after_resend', 'ch_after_resend');
    assert.equal(applies.appliedOf(eventId), 1, 'applied once, ever');
  });

  test('keys past keyRetentionDays are deleted in their own step; a key whose event is still stored stays', async () => {
    await deliverAndProcess('evt_key_expired', 'ch_key_expired');
    await database.sql`update webhook_inbox set status = 'failed' where event_id = 'evt_key_expired'`;
    await database.sql`insert into webhook_event_keys (provider, event_id, fingerprint, received_at) values ('stripe', 'evt_key_only', null, now() - interval '401 days')`;
    await age('evt_key_expired', 401);
    const [result] = await retention(new Date());
    assert.equal(result!.keysDeleted, 1);
    const left = await database.sql`select event_id from webhook_event_keys where event_id in ('evt_key_only', 'evt_key_expired') order by event_id`;
    assert.deepEqual(
      left.map((r) => r.event_id),
      ['evt_key_expired'],
      'the failed row is still stored, so its key stays',
    );
    assert.equal(result!.keyCutoff.getTime(), result!.cutoff.getTime() - (400 - 30) * DAY_MS);
  });
});
