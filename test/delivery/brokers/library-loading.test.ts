import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config/load-config.ts';
import { closeEventTransports, createEventTransports } from '../../../src/delivery/destination-transports.ts';
import { createLogger } from '../../../src/logger.ts';
import { newDestinationSecret } from '../support/lanes.ts';

// Both client libraries are CommonJS: once loaded, their files are in the module cache of this
// process (node:test runs every file in a process of its own, and this one imports neither).
const moduleCache = createRequire(import.meta.url).cache;
const loaded = (library: string) => Object.keys(moduleCache).some((file) => file.includes(`/node_modules/${library}/`));

test("a broker's client library is loaded only when a destination of its kind is configured, and no connection is opened before the first event", async () => {
  const secret = newDestinationSecret();
  const destinations = (env: Record<string, string>) => loadConfig(env, () => '{}').destinations;
  const logger = createLogger('silent');
  const http = await createEventTransports(destinations({ DESTINATION_URL_APP: 'https://app.example.com/hooks', DESTINATION_SECRET_APP: secret }), logger);
  assert.deepEqual(
    [loaded('amqplib'), loaded('@nats-io/transport-node'), loaded('@nats-io/jetstream')],
    [false, false, false],
    'an HTTP destination loads no broker library',
  );
  // Port 9 (discard) on loopback: nothing is contacted by creating the transports.
  const rabbitmq = await createEventTransports(
    destinations({ DESTINATION_URL_BUS: 'amqp://guest:guest@127.0.0.1:9/', DESTINATION_SECRET_BUS: secret }),
    logger,
  );
  assert.deepEqual([loaded('amqplib'), loaded('@nats-io/transport-node')], [true, false], 'a RabbitMQ destination loads amqplib only');
  const nats = await createEventTransports(destinations({ DESTINATION_URL_JET: 'nats://127.0.0.1:9', DESTINATION_SECRET_JET: secret }), logger);
  assert.deepEqual([loaded('@nats-io/transport-node'), loaded('@nats-io/jetstream')], [true, true], 'a NATS destination loads the NATS client');
  for (const transports of [http, rabbitmq, nats]) await closeEventTransports(transports, logger);
});
