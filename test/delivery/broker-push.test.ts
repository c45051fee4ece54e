import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SECRET, waitUntilSettled } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { NATS_HOST, type ScratchStream, createScratchStream, natsUnavailable } from '../support/nats.ts';
import { type ScratchVhost, createScratchVhost, declareOrderedQueue, rabbitmqUnavailable } from '../support/rabbitmq.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { waitFor } from '../support/wait.ts';
import { type BrokerConsumer, consumeNatsStream, consumeRabbitmqQueue } from './support/broker-consumer.ts';
import { type PostedHistories, assertEveryPaymentInOrder, brokerHasAll, postHistories } from './support/histories.ts';
import { newDestinationSecret, paymentsOf } from './support/lanes.ts';

const HISTORIES = 200;
const rabbitmqSkip = await rabbitmqUnavailable();
const natsSkip = await natsUnavailable();
const database = useTestDatabase();
const destinationSecret = newDestinationSecret();
let vhost: ScratchVhost | undefined;
let stream: ScratchStream | undefined;
let rabbitmq: BrokerConsumer | undefined;
let nats: BrokerConsumer | undefined;
let service: TestService;
let posted: PostedHistories;
const seed = Date.now() % 2_147_483_647;

setup(async () => {
  if (rabbitmqSkip && natsSkip) return;
  // Registered first, so run last (teardown runs last in, first out): after the service has stopped.
  database.onTeardown(() => vhost?.drop());
  database.onTeardown(() => stream?.drop());
  database.onTeardown(() => rabbitmq?.close());
  database.onTeardown(() => nats?.close());
  const scratch = await mkdtemp(path.join(tmpdir(), 'inbox-broker-push-'));
  database.onTeardown(() => rm(scratch, { recursive: true, force: true }));
  const env: Record<string, string> = { WEBHOOK_SECRET_STRIPE: SECRET };
  const destinations: Record<string, unknown> = {};
  if (!rabbitmqSkip) {
    vhost = await createScratchVhost('push');
    await declareOrderedQueue(vhost, 'payment-events', 'payments');
    rabbitmq = await consumeRabbitmqQueue(vhost.url, 'payments', destinationSecret);
    Object.assign(env, { DESTINATION_URL_BUS: vhost.url, DESTINATION_SECRET_BUS: destinationSecret });
  }
  if (!natsSkip) {
    stream = await createScratchStream('push');
    nats = await consumeNatsStream(NATS_HOST, stream.name, destinationSecret);
    Object.assign(env, { DESTINATION_URL_JET: `nats://${NATS_HOST}`, DESTINATION_SECRET_JET: destinationSecret });
    destinations.jet = { nats: { subjectPrefix: stream.subjectPrefix, stream: stream.name } };
  }
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations });
  await writeFile(configPath, configText);
  service = await startTestService({ database, env: { ...env, INBOX_CONFIG: configPath }, files: { [configPath]: configText } });
  posted = await postHistories(service.baseUrl, SECRET, { count: HISTORIES, seed, prefix: 'bus' });
  await waitUntilSettled(database.sql, posted.eventIds, 120_000);
});

async function receivedInOrder(consumer: BrokerConsumer, routeOf: (chargeId: string) => string, context: string): Promise<string> {
  const payments = await waitFor(
    async () => {
      const rows = await paymentsOf(database.sql, posted.chargeIds);
      return rows.length === posted.chargeIds.length && brokerHasAll(consumer, rows) ? rows : undefined;
    },
    { message: `every payment's last event on ${context}`, timeoutMs: 120_000, intervalMs: 200 },
  );
  const repeats = await assertEveryPaymentInOrder(database.sql, consumer, payments, routeOf, `(seed ${seed}) ${context}`);
  // Nothing failed here: a repeat would mean a lane published twice at once.
  assert.equal(repeats, 0, 'no event published twice');
  return `${consumer.received.length} events of ${payments.length} payments`;
}

describe(`${HISTORIES} random charge histories, posted as signed webhooks in random order with duplicates, published onto the team's broker`, () => {
  test("RabbitMQ: the consumer of the single-active-consumer queue verifies every payment's events 1..n in order, no gap, message-id = event id, routing key = provider.charge", {
    skip: rabbitmqSkip,
  }, async (t) => {
    t.diagnostic(await receivedInOrder(rabbitmq!, (chargeId) => `stripe.${chargeId}`, 'the RabbitMQ queue'));
  });

  test("NATS: reading the JetStream stream, the consumer verifies every payment's events 1..n in order, no gap, Nats-Msg-Id = event id, subject = prefix.provider.charge", {
    skip: natsSkip,
  }, async (t) => {
    t.diagnostic(await receivedInOrder(nats!, (chargeId) => `${stream!.subjectPrefix}.stripe.${chargeId}`, 'the JetStream stream'));
  });
});
