import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type Consumer, startConsumer } from './support/consumer.ts';
import { deliveriesSettled, passDeliveryTime, secondsToLastDeadline } from './support/delivery-time.ts';
import { allDelivered, newDestinationSecret, paymentsOf } from './support/lanes.ts';

// A consumer that rate-limits for a moment must never need an operator. Found from outside:
// `Retry-After: 0` (or a date already past) parked a lane in 89 ms, 8 attempts, because the header
// replaced the backoff. Here the waits are the database's deadlines, moved on by the test
// (support/delivery-time.ts) instead of waited out: each step below is one retry of every
// throttled lane, and what the inbox scheduled is read before time moves.

const BASE = 1_760_000_000;
const MAX_ATTEMPTS = 3;
const PATIENCE_SECONDS = 60;
const RETRY_DELAY_SECONDS = 1;
const destinationOptions = {
  maxAttempts: MAX_ATTEMPTS,
  retryDelaySeconds: RETRY_DELAY_SECONDS,
  retryDelayMaxSeconds: 600,
  backoffAfterFailingLanes: 5,
  patienceSeconds: PATIENCE_SECONDS,
};
const RETRY_AFTER: Record<string, { header: string; seconds: number }> = {
  ch_429_zero: { header: '0', seconds: 0 },
  ch_429_past_date: { header: new Date(Date.now() - 3600_000).toUTCString(), seconds: 0 },
  ch_429_three_seconds: { header: '3', seconds: 3 },
};
const THROTTLED = Object.keys(RETRY_AFTER);
const GOOD = Array.from({ length: 20 }, (_, n) => `ch_flowing_${n}`);

const database = useTestDatabase();
let consumer: Consumer;
let scratch: string;
let service: TestService;

setup(async () => {
  database.onTeardown(() => consumer?.close());
  database.onTeardown(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));
  const secret = newDestinationSecret();
  consumer = await startConsumer(secret);
  consumer.behaviour = (event) => {
    const limited = RETRY_AFTER[event.chargeId];
    return limited ? { kind: 'status', status: 429, headers: { 'retry-after': limited.header } } : { kind: 'ok' };
  };
  scratch = await mkdtemp(path.join(tmpdir(), 'inbox-throttled-'));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: { app: destinationOptions } });
  await writeFile(configPath, configText);
  const env = { WEBHOOK_SECRET_STRIPE: SECRET, DESTINATION_URL_APP: consumer.url, DESTINATION_SECRET_APP: secret, INBOX_CONFIG: configPath };
  service = await startTestService({ database, env, files: { [configPath]: configText } });
});

interface ThrottledLane {
  chargeId: string;
  attempts: number;
  throttles: number;
  parked: boolean;
  /** What the inbox scheduled after this answer: next_attempt_at − last_attempt_at. */
  waitSeconds: number | null;
  /** From the first 429 to this answer, on the clock the test moves. */
  throttledForSeconds: number;
}

async function throttledLanes(): Promise<ThrottledLane[]> {
  const rows = await database.sql`
    select p.gateway_charge_id, l.attempts, l.throttles, l.parked_at is not null as parked,
           extract(epoch from l.next_attempt_at - l.last_attempt_at)::float8 as wait_seconds,
           extract(epoch from coalesce(l.parked_at, l.last_attempt_at) - l.throttled_since)::float8 as throttled_for
    from delivery_lanes l join payments p on p.id = l.payment_id
    where l.destination = 'app' and p.gateway_charge_id = any(${THROTTLED}::text[]) order by p.gateway_charge_id`;
  return rows.map((r) => ({
    chargeId: r.gateway_charge_id,
    attempts: r.attempts,
    throttles: r.throttles,
    parked: r.parked,
    waitSeconds: r.wait_seconds,
    throttledForSeconds: r.throttled_for,
  }));
}

/** The shortest wait the configured backoff allows after `failures` answers in a row (its jitter only lengthens it). */
const backoffFloor = (failures: number) => Math.min(600, RETRY_DELAY_SECONDS * 2 ** (failures - 1));

test('a consumer answering 429 with Retry-After 0, a past date or 3 s: every wait is at least the backoff, no lane parks before the patience and then maxAttempts are spent, and other payments flow', async () => {
  for (const [n, chargeId] of [...THROTTLED, ...GOOD].entries()) {
    const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE + n });
    assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
  }
  const good = await waitFor(
    async () => {
      const rows = await paymentsOf(database.sql, GOOD);
      return rows.length === GOOD.length && allDelivered(consumer, rows) ? rows : undefined;
    },
    { message: 'the 20 other payments delivered', timeoutMs: 30_000 },
  );

  let steps = 0;
  for (;;) {
    await waitFor(async () => (await deliveriesSettled(database.sql)) && (await throttledLanes()).length === THROTTLED.length, {
      message: `step ${steps}: every throttled lane answered`,
    });
    const lanes = await throttledLanes();
    for (const lane of lanes) {
      const answers = consumer.received.filter((e) => e.chargeId === lane.chargeId).length;
      assert.equal(lane.attempts + lane.throttles, answers, `${lane.chargeId}: each 429 is one attempt or one throttle`);
      if (lane.parked) {
        assert.equal(lane.attempts, MAX_ATTEMPTS, `${lane.chargeId}: parked after maxAttempts counted attempts`);
        assert.ok(lane.throttledForSeconds >= PATIENCE_SECONDS, `${lane.chargeId}: parked only after the patience (${lane.throttledForSeconds} s)`);
        continue;
      }
      const floor = Math.max(backoffFloor(answers), RETRY_AFTER[lane.chargeId]!.seconds);
      assert.ok(lane.waitSeconds! >= floor - 0.01, `${lane.chargeId}, answer ${answers}: waits ${lane.waitSeconds} s, at least ${floor} s`);
      if (lane.throttledForSeconds < PATIENCE_SECONDS) assert.equal(lane.attempts, 0, `${lane.chargeId}: within the patience no 429 counts`);
    }
    if (lanes.every((lane) => lane.parked)) break;
    steps += 1;
    assert.ok(steps < 40, 'the lanes park in a bounded number of steps');
    await passDeliveryTime(database.sql, (await secondsToLastDeadline(database.sql)) + 1);
  }

  assert.equal(consumer.unverified, 0);
  for (const payment of good)
    assert.equal(consumer.received.filter((e) => e.chargeId === payment.chargeId).length, 1, `${payment.chargeId}: delivered once, no failed attempt`);
  const [destination] = await database.sql`select backoff_trips from delivery_destinations where name = 'app'`;
  assert.equal(destination?.backoff_trips ?? 0, 0, 'three throttled lanes did not back the destination off as a whole');
});
