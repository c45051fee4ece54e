import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, startConsumer } from './support/consumer.ts';
import { laneOf, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const POISONED = 'ch_poisoned';
const FINE = 'ch_fine';

const database = useTestDatabase();
let consumer: Consumer;
let service: TestService;
let cliEnv: Record<string, string>;

setup(async () => {
  database.onTeardown(() => consumer?.close());
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  const env = { DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: secret };
  cliEnv = { ...env, DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, ...env } });
  // A database error that repeats for one lane, whatever the destination answers: recording its
  // progress fails. Two runs in all (pg-boss's retries are 20 with up to a minute between; the
  // queue's settings are read by each job's insert, so this applies to the jobs queued from now).
  await database.sql.unsafe(`
    create function fail_poisoned_lane() returns trigger language plpgsql as $$
    begin
      if new.delivered_sequence > 0 and exists (select 1 from payments p where p.id = new.payment_id and p.gateway_charge_id = '${POISONED}') then
        raise exception 'the test poisoned this lane';
      end if;
      return new;
    end $$;
    create trigger fail_poisoned_lane before insert or update on delivery_lanes for each row execute function fail_poisoned_lane();
    update pgboss.queue set retry_limit = 1, retry_delay = 0, retry_backoff = false where name = 'deliveries';`);
});

describe('a lane whose delivery runs fail every retry', () => {
  test('parks with the last error, the other payment is delivered, and lanes retry delivers it once the cause is gone', async () => {
    for (const chargeId of [POISONED, FINE]) {
      assert.equal(
        (await postStripe(service.baseUrl, chargeEvent({ id: `evt_${chargeId}`, type: 'charge.succeeded', chargeId, created: 1_760_000_000 }), SECRET)).status,
        200,
      );
    }
    await waitUntilSettled(database.sql, [`evt_${POISONED}`, `evt_${FINE}`], 60_000);
    const payments = await paymentsOf(database.sql, [POISONED, FINE]);
    const poisoned = payments.find((p) => p.chargeId === POISONED);
    const fine = payments.find((p) => p.chargeId === FINE);
    const lane = await waitFor(
      async () => {
        const row = await laneOf(database.sql, 'app', poisoned!.id);
        return row?.parked ? row : undefined;
      },
      { message: 'the poisoned lane to park', timeoutMs: 60_000 },
    );
    assert.match(lane.lastError ?? '', /delivery runs failed 2 times .*raised at fail_poisoned_lane\(\)/);
    assert.equal(lane.deliveredSequence, 0);
    await waitFor(async () => (await laneOf(database.sql, 'app', fine!.id))?.deliveredSequence === 1, { message: 'the other payment delivered' });

    const parked = await runInboxctl(['lanes', '--parked', '--json'], cliEnv);
    assert.equal(parked.code, 1, parked.stderr);
    assert.deepEqual(
      parked.json<{ lanes: { chargeId: string }[] }>().lanes.map((l) => l.chargeId),
      [POISONED],
    );

    await database.sql`drop trigger fail_poisoned_lane on delivery_lanes`;
    const retry = await runInboxctl(['lanes', 'retry', 'app', `stripe:${POISONED}`], cliEnv);
    assert.equal(retry.code, 0, retry.stderr);
    await waitFor(async () => (await laneOf(database.sql, 'app', poisoned!.id))?.deliveredSequence === 1, { message: 'the retried lane delivered' });
    const sent = consumer.received.filter((e) => e.chargeId === POISONED);
    assert.equal(new Set(sent.map((e) => e.webhookId)).size, 1, 'every send of it, one webhook-id (at least once)');
  });
});
