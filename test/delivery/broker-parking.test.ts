import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runInboxctl } from '../cli/run-inboxctl.ts';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { type ScratchVhost, createScratchVhost, rabbitmqUnavailable } from '../support/rabbitmq.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { waitFor } from '../support/wait.ts';
import { type BrokerConsumer, consumeRabbitmqQueue } from './support/broker-consumer.ts';
import { applyBySequence } from './support/consumer.ts';
import { laneOf, newDestinationSecret, paymentsOf } from './support/lanes.ts';

const BASE = 1_760_000_000;
const MAX_ATTEMPTS = 3;
const destinationOptions = {
  maxAttempts: MAX_ATTEMPTS,
  timeoutMs: 3_000,
  retryDelaySeconds: 0.2,
  retryDelayMaxSeconds: 0.5,
  backoffAfterFailingLanes: 5,
  rabbitmq: { exchange: 'bus' },
};
const STUCK = 'ch_unbound';
const GOOD = Array.from({ length: 10 }, (_, n) => `ch_bound_${n}`);
const skip = await rabbitmqUnavailable();

const database = useTestDatabase();
let vhost: ScratchVhost;
let consumer: BrokerConsumer;
let service: TestService;
let cliEnv: Record<string, string>;

/** Binds the queue to one payment's routing key: a payment not bound has nowhere to go (the broker returns its messages). */
async function bindPayment(chargeId: string): Promise<void> {
  const channel = await (await vhost.connect()).createChannel();
  await channel.bindQueue('payments', 'bus', `stripe.${chargeId}`);
  await channel.close();
}

setup(async () => {
  if (skip) return;
  vhost = await createScratchVhost('parking');
  database.onTeardown(() => vhost.drop());
  const channel = await (await vhost.connect()).createChannel();
  await channel.assertExchange('bus', 'topic', { durable: true });
  await channel.assertQueue('payments', { durable: true, arguments: { 'x-single-active-consumer': true } });
  for (const chargeId of GOOD) await bindPayment(chargeId);
  const secret = newDestinationSecret();
  consumer = await consumeRabbitmqQueue(vhost.url, 'payments', secret);
  database.onTeardown(() => consumer.close());
  const scratch = await mkdtemp(path.join(tmpdir(), 'inbox-broker-parking-'));
  database.onTeardown(() => rm(scratch, { recursive: true, force: true }));
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations: { bus: destinationOptions } });
  await writeFile(configPath, configText);
  const env = { DESTINATION_URL_BUS: vhost.url, DESTINATION_SECRET_BUS: secret, INBOX_CONFIG: configPath };
  cliEnv = { ...env, DATABASE_URL: database.url, WEBHOOK_SECRET_STRIPE: SECRET };
  service = await startTestService({ database, env: { WEBHOOK_SECRET_STRIPE: SECRET, ...env }, files: { [configPath]: configText } });
});

/** Paid, then (once paid) refunded: two events in the lane, the second behind the first. */
async function payThenRefund(chargeId: string): Promise<void> {
  assert.equal(
    (await postStripe(service.baseUrl, chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE }), SECRET)).status,
    200,
  );
  await waitUntilSettled(database.sql, [`evt_${chargeId}_paid`], 60_000);
  const refunded = chargeEvent({ id: `evt_${chargeId}_refund`, type: 'charge.refunded', chargeId, created: BASE + 60, amountRefunded: 2000 });
  assert.equal((await postStripe(service.baseUrl, refunded, SECRET)).status, 200);
}

test('a payment the broker cannot route parks its own lane after maxAttempts, as an HTTP failure does, while the others are published; bound and retried with inboxctl, it is published in order', {
  skip,
}, async () => {
  await Promise.all([STUCK, ...GOOD].map(payThenRefund));
  await waitUntilSettled(
    database.sql,
    [STUCK, ...GOOD].flatMap((c) => [`evt_${c}_paid`, `evt_${c}_refund`]),
    60_000,
  );
  const payments = await paymentsOf(database.sql, [STUCK, ...GOOD]);
  const stuck = payments.find((p) => p.chargeId === STUCK)!;
  const lane = await waitFor(
    async () => {
      const row = await laneOf(database.sql, 'bus', stuck.id);
      return row?.parked ? row : undefined;
    },
    { message: "the unroutable payment's lane to park", timeoutMs: 60_000 },
  );
  assert.equal(lane.attempts, MAX_ATTEMPTS);
  assert.equal(lane.deliveredSequence, 0);
  assert.match(lane.lastError ?? '', /unroutable: no queue is bound to exchange "bus" for routing key "stripe\.ch_unbound"/);
  await waitFor(() => GOOD.every((chargeId) => consumer.acceptedFor(chargeId).length === 2), { message: 'the bound payments published', timeoutMs: 30_000 });
  assert.equal(consumer.acceptedFor(STUCK).length, 0);

  const parked = await runInboxctl(['lanes', '--parked', '--json'], cliEnv);
  assert.equal(parked.code, 1, parked.stderr);
  assert.deepEqual(
    parked.json<{ lanes: { chargeId: string }[] }>().lanes.map((l) => l.chargeId),
    [STUCK],
  );
  await bindPayment(STUCK);
  const retry = await runInboxctl(['lanes', 'retry', 'bus', `stripe:${STUCK}`], cliEnv);
  assert.equal(retry.code, 0, retry.stderr);
  await waitFor(() => consumer.acceptedFor(STUCK).length === 2, { message: 'the retried lane published', timeoutMs: 30_000 });
  const { applied, inOrder, repeats } = applyBySequence(consumer.acceptedFor(STUCK));
  assert.ok(inOrder);
  assert.deepEqual(
    applied.map((e) => e.type),
    ['payment.paid', 'payment.refunded'],
  );
  assert.equal(repeats, 0, 'a returned message was never taken by a queue');
  const destination = await database.sql`select backoff_trips from delivery_destinations where name = 'bus'`;
  assert.ok(destination.length === 0 || destination[0]!.backoff_trips === 0, 'one failing lane did not back the destination off');
});
