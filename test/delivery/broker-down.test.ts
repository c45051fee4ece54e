import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SECRET } from '../processing/harness.ts';
import { useTestDatabase } from '../support/database.ts';
import { NATS_HOST, type ScratchStream, createScratchStream, natsUnavailable } from '../support/nats.ts';
import { type ScratchVhost, createScratchVhost, declareOrderedQueue, rabbitmqUnavailable, rabbitmqUrl } from '../support/rabbitmq.ts';
import { type TestService, startTestService } from '../support/service.ts';
import { setup } from '../support/setup.ts';
import { chargeEvent, postStripe } from '../support/stripe.ts';
import { type TcpProxy, closedProxyTo } from '../support/tcp-proxy.ts';
import { waitFor } from '../support/wait.ts';
import { type BrokerConsumer, consumeNatsStream, consumeRabbitmqQueue } from './support/broker-consumer.ts';
import { applyBySequence } from './support/consumer.ts';
import { newDestinationSecret, paymentsOf } from './support/lanes.ts';

const BASE = 1_760_000_000;
const MAX_ATTEMPTS = 3;
// A lane alone would park after its 3 attempts, 1 + 2 s later at the least: time enough, on a busy
// machine, for the 5 failing lanes that make the destination back off as a whole (with 0.2 s, as
// test/delivery/destination-down.test.ts has it, a first lane sometimes parked before the fifth failed).
const destinationOptions = { maxAttempts: MAX_ATTEMPTS, timeoutMs: 3_000, retryDelaySeconds: 1, retryDelayMaxSeconds: 4, backoffAfterFailingLanes: 5 };
const CHARGES = Array.from({ length: 20 }, (_, n) => `ch_brokerdown_${n}`);
const rabbitmqSkip = await rabbitmqUnavailable();
const natsSkip = await natsUnavailable();
const skip = rabbitmqSkip && natsSkip ? `${rabbitmqSkip}; ${natsSkip}` : undefined;

const database = useTestDatabase();
/** Each broker's destination, reached through a port of the test's that refuses connections until opened. */
const brokers: { destination: string; proxy: TcpProxy; consumer?: BrokerConsumer }[] = [];
let vhost: ScratchVhost | undefined;
let stream: ScratchStream | undefined;
let service: TestService;

/** `host:port` of a broker, for a proxy in front of it. */
function hostAndPort(host: string): { host: string; port: number } {
  const [name, port] = host.split(':');
  return { host: name!, port: Number(port) };
}

setup(async () => {
  if (skip) return;
  database.onTeardown(() => vhost?.drop());
  database.onTeardown(() => stream?.drop());
  database.onTeardown(() => Promise.all(brokers.map((b) => Promise.all([b.proxy.close(), b.consumer?.close()]))));
  const scratch = await mkdtemp(path.join(tmpdir(), 'inbox-broker-down-'));
  database.onTeardown(() => rm(scratch, { recursive: true, force: true }));
  const secret = newDestinationSecret();
  const env: Record<string, string> = { WEBHOOK_SECRET_STRIPE: SECRET };
  const destinations: Record<string, unknown> = {};
  if (!rabbitmqSkip) {
    vhost = await createScratchVhost('down');
    await declareOrderedQueue(vhost, 'payment-events', 'payments');
    const proxy = await closedProxyTo({ host: '127.0.0.1', port: 5672 });
    brokers.push({ destination: 'bus', proxy, consumer: await consumeRabbitmqQueue(vhost.url, 'payments', secret) });
    Object.assign(env, { DESTINATION_URL_BUS: rabbitmqUrl(vhost.name, `127.0.0.1:${proxy.port}`), DESTINATION_SECRET_BUS: secret });
    destinations.bus = destinationOptions;
  }
  if (!natsSkip) {
    stream = await createScratchStream('down');
    const proxy = await closedProxyTo(hostAndPort(NATS_HOST));
    brokers.push({ destination: 'jet', proxy, consumer: await consumeNatsStream(NATS_HOST, stream.name, secret) });
    Object.assign(env, { DESTINATION_URL_JET: `nats://127.0.0.1:${proxy.port}`, DESTINATION_SECRET_JET: secret });
    destinations.jet = { ...destinationOptions, nats: { subjectPrefix: stream.subjectPrefix } };
  }
  const configPath = path.join(scratch, 'inbox.json');
  const configText = JSON.stringify({ destinations });
  await writeFile(configPath, configText);
  service = await startTestService({ database, env: { ...env, INBOX_CONFIG: configPath }, files: { [configPath]: configText } });
});

test('a broker that is down (its port refuses connections) backs off as a whole: no lane parks, and once it is up every payment is published in order', {
  skip,
}, async () => {
  for (const [n, chargeId] of CHARGES.entries()) {
    const paid = chargeEvent({ id: `evt_${chargeId}_paid`, type: 'charge.succeeded', chargeId, created: BASE + n });
    assert.equal((await postStripe(service.baseUrl, paid, SECRET)).status, 200);
  }
  const names = brokers.map((b) => b.destination);
  // Backed off, probed, still down, backed off again: long past the 3 attempts that would park a lane.
  await waitFor(
    async () => {
      const rows = await database.sql`select name from delivery_destinations where name = any(${names}) and backoff_trips >= 2`;
      return rows.length === names.length;
    },
    { message: `${names.join(' and ')} backing off twice`, timeoutMs: 60_000 },
  );
  for (const destination of names) {
    const [lanes] = await database.sql`
      select count(*) filter (where parked_at is not null)::int as parked, max(attempts)::int as most, min(last_error) as error
      from delivery_lanes where destination = ${destination}`;
    assert.equal(lanes!.parked, 0, `${destination}: no lane parked while the broker was down`);
    assert.ok(lanes!.most < MAX_ATTEMPTS, `${destination}: no lane spent its attempts during the outage (most: ${lanes!.most})`);
    assert.match(lanes!.error, /connection failed/, `${destination}: the lanes say why`);
  }

  for (const broker of brokers) await broker.proxy.open();
  const payments = await waitFor(
    async () => {
      const rows = await paymentsOf(database.sql, CHARGES);
      return rows.length === CHARGES.length ? rows : undefined;
    },
    { message: 'a payment for every charge' },
  );
  for (const { destination, consumer } of brokers) {
    await waitFor(() => payments.every((p) => consumer!.acceptedFor(p.chargeId).length >= p.eventSequence), {
      message: `every payment on ${destination} once it is up`,
      timeoutMs: 60_000,
    });
    for (const payment of payments) assert.ok(applyBySequence(consumer!.acceptedFor(payment.chargeId)).inOrder, `${destination} ${payment.chargeId}`);
    assert.equal(consumer!.unverified, 0);
  }
  // The broker's confirm comes before the service records it (and the probe's end of the backoff): wait for the record.
  await waitFor(
    async () =>
      (await database.sql`select name from delivery_destinations where name = any(${names}) and backoff_trips = 0 and backoff_until is null`).length ===
      names.length,
    { message: 'the first confirmed publish ending each backoff' },
  );
});
