import assert from 'node:assert/strict';
import { type TestContext, describe, test } from 'node:test';
import { type BrokerConsumer, consumeRabbitmqQueue } from '../delivery/support/broker-consumer.ts';
import type { PostedHistories } from '../delivery/support/histories.ts';
import { newDestinationSecret } from '../delivery/support/lanes.ts';
import { useTestDatabase } from '../support/database.ts';
import { type ScratchVhost, createScratchVhost, declareOrderedQueue, rabbitmqUnavailable } from '../support/rabbitmq.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { aPublishFailed, brokerService, everyPaymentDelivered, laneProgress, parkedLanes, storeHistoriesFirst } from './support/broker-faults.ts';

const HISTORIES = 200;
/** The strike comes once the consumer has this many messages: early in a backlog of ~400. */
const STRIKE_AFTER = 40;
const routeOf = (chargeId: string) => `stripe.${chargeId}`;
const skip = await rabbitmqUnavailable();
const database = useTestDatabase();
let vhost: ScratchVhost;
const cleanUps: (() => Promise<unknown>)[] = [];

setup(async () => {
  if (skip) return;
  vhost = await createScratchVhost('faults');
  // Registered first, so run last (teardown runs last in, first out).
  database.onTeardown(() => vhost.drop());
  database.onTeardown(() => Promise.all(cleanUps.map((cleanUp) => cleanUp())));
});

/** A destination publishing to its own exchange and queue in the file's vhost, its consumer, and the service process to run it. */
async function destinationWithConsumer(name: string) {
  const secret = newDestinationSecret();
  await declareOrderedQueue(vhost, name, `${name}-queue`);
  const consumer = await consumeRabbitmqQueue(vhost.url, `${name}-queue`, secret);
  const service = await brokerService(database.url, { name, url: vhost.url, secret, options: { rabbitmq: { exchange: name } } });
  cleanUps.push(
    () => consumer.close(),
    () => service.cleanUp(),
  );
  return { consumer, service };
}

describe('RabbitMQ destination under faults (system tier: real service processes, real broker)', { skip }, () => {
  test('kill -9 of the service while it publishes, then a restart: nothing lost, every payment in order; repeats carry the same message id and are counted', async (t) => {
    const { consumer, service } = await destinationWithConsumer('killed');
    const histories = await storeHistoriesFirst(service, { count: HISTORIES, seed: 31, prefix: 'rmqkill' });
    let running = await service.start();
    try {
      await waitFor(() => consumer.received.length >= STRIKE_AFTER, { message: `${STRIKE_AFTER} messages on the queue`, timeoutMs: 120_000, intervalMs: 5 });
      await running.kill();
      const receivedAtKill = consumer.received.length;
      running = await service.start();
      const { repeats, total } = await everyPaymentDelivered(database.sql, consumer, histories, routeOf, 'kill -9');
      assert.ok(receivedAtKill < total, `the kill came while events were still to be published (${receivedAtKill} of ${total} on the queue)`);
      t.diagnostic(
        `killed with ${receivedAtKill} of ${total} events on the queue; after the restart all ${total} arrived in order, ${repeats} repeated with the same message id`,
      );
    } finally {
      // Before the next test: a service left running would take its lanes' jobs (unknown destination there).
      await running.stop();
    }
  });

  test('a broker restart while the service publishes (the broker closes every connection, then refuses new ones for a while): nothing lost, every payment in order; repeats counted', async (t) => {
    const { consumer, service } = await destinationWithConsumer('restarted');
    const histories = await storeHistoriesFirst(service, { count: HISTORIES, seed: 37, prefix: 'rmqrestart' });
    const running = await service.start();
    try {
      await restartDuringPublishing(consumer, histories, t);
    } finally {
      await running.stop();
    }
  });
});

/** Strikes once publishing is under way, lets the service fail against the refusing broker, then lets it back. */
async function restartDuringPublishing(consumer: BrokerConsumer, histories: PostedHistories, t: TestContext): Promise<void> {
  // What a restart does to clients, on this file's vhost only. New connections are refused from the
  // first message on (the open ones stay), so that the strike itself is one rabbitmqctl call.
  await waitFor(() => consumer.received.length > 0, { message: 'the first message on the queue', timeoutMs: 120_000, intervalMs: 5 });
  await vhost.refuseConnections();
  await waitFor(() => consumer.received.length >= STRIKE_AFTER, { message: `${STRIKE_AFTER} messages on the queue`, timeoutMs: 120_000, intervalMs: 5 });
  await vhost.closeConnections();
  const atRestart = await laneProgress(database.sql, 'restarted', histories.chargeIds);
  // The service notices: its publishes fail while the broker is "down" (lanes record the failure).
  await aPublishFailed(database.sql, 'restarted', 'the broker refuses connections');
  await vhost.acceptConnections();
  const { repeats, total } = await everyPaymentDelivered(database.sql, consumer, histories, routeOf, 'broker restart');
  assert.ok(atRestart.delivered < total, `the restart came while events were still to be published (${atRestart.delivered} of ${total} recorded)`);
  assert.equal(await parkedLanes(database.sql, 'restarted'), 0, 'no lane parked');
  t.diagnostic(
    `restart with ${atRestart.delivered} of ${total} events recorded as published; all ${total} arrived in order, ${repeats} repeated with the same message id`,
  );
}
