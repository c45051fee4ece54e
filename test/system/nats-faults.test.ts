import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type BrokerConsumer, consumeNatsStream } from '../delivery/support/broker-consumer.ts';
import { newDestinationSecret } from '../delivery/support/lanes.ts';
import { useTestDatabase } from '../support/database.ts';
import {
  NATS_HOST,
  type PrivateNatsServer,
  type ScratchStream,
  createScratchStream,
  natsUnavailable,
  privateNatsServerUnavailable,
  startPrivateNatsServer,
} from '../support/nats.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { aPublishFailed, brokerService, everyPaymentDelivered, laneProgress, parkedLanes, storeHistoriesFirst } from './support/broker-faults.ts';

const HISTORIES = 200;
/** The strike comes once this many events are recorded as published: early in a backlog of ~400. */
const STRIKE_AFTER = 40;
const sharedSkip = await natsUnavailable();
const privateSkip = privateNatsServerUnavailable();
const database = useTestDatabase();
const cleanUps: (() => Promise<unknown>)[] = [];

setup(() => {
  database.onTeardown(() => Promise.all(cleanUps.map((cleanUp) => cleanUp())));
});

/** A destination publishing to a stream of its own on `host`, and the service process to run it. */
async function natsDestination(name: string, host: string) {
  const secret = newDestinationSecret();
  const stream = await createScratchStream(name, host);
  const service = await brokerService(database.url, {
    name,
    url: `nats://${host}`,
    secret,
    options: { nats: { subjectPrefix: stream.subjectPrefix, stream: stream.name } },
  });
  cleanUps.push(
    () => stream.drop(),
    () => service.cleanUp(),
  );
  return { secret, stream, service };
}

function consumerOf(host: string, stream: ScratchStream, secret: string): Promise<BrokerConsumer> {
  return consumeNatsStream(host, stream.name, secret).then((consumer) => {
    cleanUps.push(() => consumer.close());
    return consumer;
  });
}

describe('NATS destination under faults (system tier: real service processes, real nats-server)', () => {
  test('kill -9 of the service while it publishes, then a restart: nothing lost, every payment in order on the stream (resends inside the duplicate window are dropped by Nats-Msg-Id)', {
    skip: sharedSkip,
  }, async (t) => {
    const { secret, stream, service } = await natsDestination('killed', NATS_HOST);
    const consumer = await consumerOf(NATS_HOST, stream, secret);
    const histories = await storeHistoriesFirst(service, { count: HISTORIES, seed: 41, prefix: 'natskill' });
    let running = await service.start();
    try {
      await waitFor(() => consumer.received.length >= STRIKE_AFTER, { message: `${STRIKE_AFTER} messages on the stream`, timeoutMs: 120_000, intervalMs: 5 });
      await running.kill();
      const receivedAtKill = consumer.received.length;
      running = await service.start();
      const routeOf = (chargeId: string) => `${stream.subjectPrefix}.stripe.${chargeId}`;
      const { repeats, total } = await everyPaymentDelivered(database.sql, consumer, histories, routeOf, 'kill -9');
      assert.ok(receivedAtKill < total, `the kill came while events were still to be published (${receivedAtKill} of ${total} on the stream)`);
      t.diagnostic(
        `killed with ${receivedAtKill} of ${total} events on the stream; after the restart all ${total} arrived in order, ${repeats} repeated (the stream drops resends it remembers)`,
      );
    } finally {
      await running.stop();
    }
  });

  test('the NATS server killed -9 while the service publishes and started again on its store: nothing lost, every payment in order; no lane parks', {
    skip: sharedSkip ?? privateSkip,
  }, async (t) => {
    const server: PrivateNatsServer = await startPrivateNatsServer();
    cleanUps.push(() => server.stop());
    const { secret, stream, service } = await natsDestination('restarted', server.host);
    const histories = await storeHistoriesFirst(service, { count: HISTORIES, seed: 43, prefix: 'natsrestart' });
    const running = await service.start();
    try {
      await waitFor(async () => (await laneProgress(database.sql, 'restarted', histories.chargeIds)).delivered >= STRIKE_AFTER, {
        message: `${STRIKE_AFTER} events published`,
        timeoutMs: 120_000,
        intervalMs: 20,
      });
      await server.kill();
      const atKill = await laneProgress(database.sql, 'restarted', histories.chargeIds);
      await aPublishFailed(database.sql, 'restarted', 'the server is down');
      await server.start();
      const consumer = await consumerOf(server.host, stream, secret);
      const routeOf = (chargeId: string) => `${stream.subjectPrefix}.stripe.${chargeId}`;
      const { repeats, total } = await everyPaymentDelivered(database.sql, consumer, histories, routeOf, 'server restart');
      assert.ok(atKill.delivered < total, `the kill came while events were still to be published (${atKill.delivered} of ${total} recorded)`);
      assert.equal(await parkedLanes(database.sql, 'restarted'), 0, 'no lane parked');
      t.diagnostic(
        `server killed with ${atKill.delivered} of ${total} events recorded as published; after its restart all ${total} were on the stream in order, ${repeats} repeated`,
      );
    } finally {
      await running.stop();
    }
  });
});
