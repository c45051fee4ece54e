import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { createLogger } from '../../src/logger.ts';
import { type RunningService, startService } from '../../src/service.ts';
import { testConfig } from '../support/config.ts';
import { useTestDatabase } from '../support/database.ts';
import { setup } from '../support/setup.ts';
import { logLineCapture } from '../support/log-lines.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, applyBySequence, startConsumer } from './support/consumer.ts';
import { newDestinationSecret, paymentsOf } from './support/lanes.ts';

const SECRET = 'whsec_push_safety_secret';
const database = useTestDatabase();
let service: RunningService;
let baseUrl: string;
/** Answers 410 Gone until told otherwise. */
let gone: Consumer;
/** Answers 302 to `elsewhere`, which must never be reached. */
let moved: Consumer;
let elsewhere: Consumer;
let env: Record<string, string>;
const secrets = { gone: newDestinationSecret(), moved: newDestinationSecret() };
const { lines, destination: logDestination } = logLineCapture();

setup(async () => {
  // Registered first, so closed last: after the service has stopped (teardown runs last in, first out).
  database.onTeardown(() => Promise.all([gone, moved, elsewhere].map((consumer) => consumer?.close())));
  database.onTeardown(() => service?.stop());
  gone = await startConsumer(secrets.gone);
  gone.behaviour = () => ({ kind: 'status', status: 410 });
  elsewhere = await startConsumer(secrets.moved);
  moved = await startConsumer(secrets.moved);
  moved.behaviour = () => ({ kind: 'status', status: 302, headers: { location: elsewhere.url } });
  env = {
    WEBHOOK_SECRET_STRIPE: SECRET,
    DESTINATION_URL_GONE: gone.url,
    DESTINATION_SECRET_GONE: secrets.gone,
    DESTINATION_URL_MOVED: moved.url,
    DESTINATION_SECRET_MOVED: secrets.moved,
    INBOX_DASHBOARD: 'on',
    METRICS_REFRESH_SECONDS: '1',
  };
  service = await startService({ config: testConfig({ ...env, LOG_LEVEL: 'info' }), databaseUrl: database.url, logger: createLogger('info', logDestination) });
  baseUrl = `http://127.0.0.1:${service.port}`;
});

async function pay(chargeId: string, created: number): Promise<void> {
  const body = chargeEvent({ id: `evt_${chargeId}`, type: 'charge.succeeded', chargeId, created });
  assert.equal((await postStripe(baseUrl, body, SECRET)).status, 200);
}

/** The delivery jobs of one lane as pg-boss holds them, with what each run said. */
async function laneJobs(destination: string, paymentId: number) {
  return database.sql`
    select state::text as state, output->>'outcome' as outcome from pgboss.job
    where name = 'deliveries' and singleton_key = ${`${destination}:${paymentId}`}`;
}

describe('destinations that answer 410 or redirect', () => {
  test('410 Gone disables the destination with one error log line, a gauge and a dashboard pill; later changes send it nothing', async () => {
    await Promise.all(['ch_safe_1', 'ch_safe_2', 'ch_safe_3'].map((c, i) => pay(c, 1_760_000_000 + i)));
    await waitFor(async () => (await database.sql`select 1 from delivery_destinations where name = 'gone' and disabled_at is not null`).length === 1, {
      message: 'the destination disabled',
      timeoutMs: 30_000,
    });
    const errors = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string; destination?: string })
      .filter((l) => l.level === 50 && l.destination === 'gone');
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.match(errors[0]!.msg, /410 Gone: it is DISABLED/);
    const requestsWhenDisabled = gone.received.length;
    assert.ok(requestsWhenDisabled >= 1 && requestsWhenDisabled <= 3, `at most the lanes already in flight asked (${requestsWhenDisabled})`);

    await pay('ch_safe_4', 1_760_000_100);
    const [payment] = await waitFor(
      async () => {
        const rows = await paymentsOf(database.sql, ['ch_safe_4']);
        return rows.length === 1 ? rows : undefined;
      },
      { message: 'ch_safe_4 stored as a payment' },
    );
    await waitFor(async () => (await laneJobs('gone', payment!.id)).some((j) => j.state === 'completed' && j.outcome === 'destination_disabled'), {
      message: 'its run for the disabled destination',
      timeoutMs: 30_000,
    });
    // Runs that read the destination's state before the 410 was recorded may still land their POST
    // (other lanes of the first three, in other batches): at most those, and nothing of the later change.
    assert.ok(gone.received.length <= 3, `at most the three lanes in flight asked (${gone.received.length})`);
    assert.deepEqual(
      gone.received.filter((e) => e.chargeId === 'ch_safe_4'),
      [],
      'nothing sent to a disabled destination',
    );

    await waitFor(async () => /inbox_destination_disabled\{destination="gone"\} 1/.test(await (await fetch(`${baseUrl}/metrics`)).text()), {
      message: 'the disabled gauge',
      timeoutMs: 10_000,
    });
    assert.match(await (await fetch(`${baseUrl}/dashboard`)).text(), /gone: DISABLED \(410\)/);
  });

  test('a redirect is not followed: the lane records the 302 and the Location is never asked', async () => {
    const [payment] = await paymentsOf(database.sql, ['ch_safe_1']);
    const lane = await waitFor(
      async () => {
        const [row] =
          await database.sql`select last_status, last_error, attempts from delivery_lanes where destination = 'moved' and payment_id = ${payment!.id}`;
        return row && row.attempts > 0 ? row : undefined;
      },
      { message: 'a failed attempt on the moved lane' },
    );
    assert.equal(lane.last_status, 302);
    assert.match(lane.last_error, /HTTP 302 \(redirects are not followed\)/);
    assert.ok(moved.received.length > 0);
    assert.equal(elsewhere.received.length, 0, 'the Location got nothing');
  });

  test('inboxctl lanes enable takes the destination back and queues what it missed, in order', async () => {
    gone.behaviour = () => ({ kind: 'ok' });
    const cli = await runInboxctl(['lanes', 'enable', 'gone'], { ...env, DATABASE_URL: database.url });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.out, /gone: enabled; 4 lanes with events left are queued/);
    for (const chargeId of ['ch_safe_1', 'ch_safe_2', 'ch_safe_3', 'ch_safe_4']) {
      await waitFor(() => gone.acceptedFor(chargeId).length > 0, { message: `${chargeId} delivered to gone`, timeoutMs: 30_000 });
      assert.ok(applyBySequence(gone.acceptedFor(chargeId)).inOrder, chargeId);
    }
  });

  test('no log line carries a destination secret', () => {
    for (const secret of Object.values(secrets)) {
      const key = secret.slice('whsec_'.length);
      assert.ok(
        lines.every((l) => !l.includes(key)),
        'a signing key reached the log',
      );
    }
  });
});
