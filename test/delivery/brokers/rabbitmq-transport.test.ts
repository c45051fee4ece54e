import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRabbitmqTransport } from '../../../src/delivery/brokers/rabbitmq-transport.ts';
import type { EventTransport } from '../../../src/delivery/event-transport.ts';
import { createLogger } from '../../../src/logger.ts';
import { freePort } from '../../support/free-port.ts';
import { type ScratchVhost, createScratchVhost, declareOrderedQueue, rabbitmqUnavailable, rabbitmqUrl } from '../../support/rabbitmq.ts';
import { waitFor } from '../../support/wait.ts';
import { type BrokerConsumer, consumeRabbitmqQueue } from '../support/broker-consumer.ts';
import { newDestinationSecret } from '../support/lanes.ts';
import { paymentEventRow, signedOutgoing } from '../support/outgoing-event.ts';

const skip = await rabbitmqUnavailable();
const SECRET = newDestinationSecret();
const logger = createLogger('silent');
let vhost: ScratchVhost;
const transports: EventTransport[] = [];

function transport(exchange: string, url = vhost.url): EventTransport {
  const created = createRabbitmqTransport({ name: 'bus', url, exchange, connectTimeoutMs: 3_000, logger });
  transports.push(created);
  return created;
}

before(async () => {
  if (skip) return;
  vhost = await createScratchVhost('transport');
});

after(async () => {
  await Promise.all(transports.map((t) => t.close().catch(() => {})));
  await vhost?.drop();
});

describe('RabbitMQ transport: a confirmed publish is delivered, anything else a failed attempt', { skip }, () => {
  let consumer: BrokerConsumer;
  before(async () => {
    await declareOrderedQueue(vhost, 'payment-events', 'payments');
    consumer = await consumeRabbitmqQueue(vhost.url, 'payments', SECRET);
  });
  after(() => consumer?.close());

  test('a publish the broker confirms is delivered; the consumer verifies it with standardwebhooks, message-id is the event id, the routing key names the payment', async () => {
    const bus = transport('payment-events');
    const row = paymentEventRow({ gatewayChargeId: 'pi_3Q.odd id/ü' });
    assert.deepEqual(await bus.send(signedOutgoing(row, SECRET)), { kind: 'delivered', status: null });
    const [received] = await waitFor(() => (consumer.received.length > 0 ? consumer.received : undefined), { message: 'the message on the queue' });
    assert.equal(received!.webhookId, row.id);
    assert.equal(received!.chargeId, 'pi_3Q.odd id/ü');
    assert.equal(consumer.unverified, 0);
    assert.deepEqual(consumer.misaddressed, [], 'message-id is the event id');
    // The charge id's dot, space, slash and non-ASCII bytes are escaped: one routing-key token per name.
    assert.equal(consumer.routes.get(row.id), 'stripe.pi_3Q%2Eodd%20id%2F%C3%BC');
  });

  test('a message no queue takes comes back (mandatory): a failed attempt naming the exchange and routing key, not a delivery', async () => {
    const connection = await vhost.connect();
    const channel = await connection.createChannel();
    await channel.assertExchange('unbound', 'topic', { durable: false });
    const result = await transport('unbound').send(signedOutgoing(paymentEventRow({ gatewayChargeId: 'ch_nowhere' }), SECRET));
    assert.equal(result.kind, 'failed');
    assert.match(result.kind === 'failed' ? result.error : '', /unroutable: no queue is bound to exchange "unbound" for routing key "stripe\.ch_nowhere"/);
  });

  test("an exchange that does not exist fails the attempt with the broker's reason; once it exists the next publish goes through on a new channel", async () => {
    const bus = transport('created-later');
    const first = await bus.send(signedOutgoing(paymentEventRow(), SECRET));
    assert.equal(first.kind, 'failed');
    assert.match(first.kind === 'failed' ? first.error : '', /NOT_FOUND - no exchange 'created-later'/);
    const connection = await vhost.connect();
    const channel = await connection.createChannel();
    await channel.assertExchange('created-later', 'topic', { durable: false });
    await channel.bindQueue('payments', 'created-later', '#');
    const row = paymentEventRow();
    assert.equal((await bus.send(signedOutgoing(row, SECRET))).kind, 'delivered');
    await waitFor(() => consumer.received.some((e) => e.webhookId === row.id), { message: 'the publish after the channel error on the queue' });
  });

  test('the broker closing every connection (what a restart does): the next publish reconnects and is delivered', async () => {
    const bus = transport('payment-events');
    assert.equal((await bus.send(signedOutgoing(paymentEventRow(), SECRET))).kind, 'delivered');
    await vhost.closeConnections();
    // The close reaches the client asynchronously: a publish in that gap fails (the channel is
    // closing) and the next one reconnects. Either way an attempt ends delivered or failed, never hangs.
    const row = paymentEventRow();
    const outcome = await waitFor(async () => ((await bus.send(signedOutgoing(row, SECRET))).kind === 'delivered' ? 'delivered' : undefined), {
      message: 'a publish after the forced close to be confirmed',
      intervalMs: 200,
    });
    assert.equal(outcome, 'delivered');
    await waitFor(() => consumer.received.some((e) => e.webhookId === row.id), { message: 'the message published after the reconnect' });
  });
});

describe('RabbitMQ transport: a broker that cannot be reached', { skip }, () => {
  test('a refused connection is a failed attempt; within the reconnect backoff the next fails at once with the same cause; close() ends sends', async () => {
    const port = await freePort();
    const down = transport('payment-events', rabbitmqUrl('/', `127.0.0.1:${port}`));
    const first = await down.send(signedOutgoing(paymentEventRow(), SECRET));
    assert.equal(first.kind, 'failed');
    assert.match(first.kind === 'failed' ? first.error : '', /connection failed: .*ECONNREFUSED/);
    const second = await down.send(signedOutgoing(paymentEventRow(), SECRET));
    assert.match(second.kind === 'failed' ? second.error : '', /connection failed: .*ECONNREFUSED.*\(next attempt in [\d.]+ s\)/);
    await down.close();
    assert.match(JSON.stringify(await down.send(signedOutgoing(paymentEventRow(), SECRET))), /shutting down/);
  });
});
