import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createNatsTransport, natsConnectOptions } from '../../../src/delivery/brokers/nats-transport.ts';
import type { EventTransport } from '../../../src/delivery/event-transport.ts';
import { createLogger } from '../../../src/logger.ts';
import { freePort } from '../../support/free-port.ts';
import { NATS_HOST, type ScratchStream, createScratchStream, natsUnavailable } from '../../support/nats.ts';
import { waitFor } from '../../support/wait.ts';
import { type BrokerConsumer, consumeNatsStream } from '../support/broker-consumer.ts';
import { newDestinationSecret } from '../support/lanes.ts';
import { paymentEventRow, signedOutgoing } from '../support/outgoing-event.ts';

const skip = await natsUnavailable();
const SECRET = newDestinationSecret();
const logger = createLogger('silent');
const transports: EventTransport[] = [];
let stream: ScratchStream;

function transport(options: { subjectPrefix?: string; stream?: string; host?: string } = {}): EventTransport {
  const created = createNatsTransport({
    name: 'jet',
    url: `nats://${options.host ?? NATS_HOST}`,
    subjectPrefix: options.subjectPrefix ?? stream.subjectPrefix,
    stream: options.stream,
    connectTimeoutMs: 3_000,
    logger,
  });
  transports.push(created);
  return created;
}

before(async () => {
  if (skip) return;
  stream = await createScratchStream('transport');
});

after(async () => {
  await Promise.all(transports.map((t) => t.close().catch(() => {})));
  await stream?.drop();
});

test("the URL's credentials become the client's options (it reads only host:port); tls:// requires TLS", () => {
  const base = { name: 'jet', connectTimeoutMs: 1000 };
  assert.deepEqual(natsConnectOptions({ ...base, url: 'nats://inbox:p%40ss@nats.internal:4333' }), {
    servers: 'nats.internal:4333',
    name: 'webhook-inbox jet',
    timeout: 1000,
    user: 'inbox',
    pass: 'p@ss',
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
  });
  const token = natsConnectOptions({ ...base, url: 'tls://s3cr3t-token@nats.internal' });
  assert.deepEqual([token.servers, token.token, token.tls, token.user], ['nats.internal:4222', 's3cr3t-token', {}, undefined]);
});

describe('NATS transport: a JetStream ack is delivered, anything else a failed attempt', { skip }, () => {
  let consumer: BrokerConsumer;
  before(async () => {
    consumer = await consumeNatsStream(NATS_HOST, stream.name, SECRET);
  });
  after(() => consumer?.close());

  test('an acked publish is delivered: Nats-Msg-Id is the event id, the subject names the payment, the consumer verifies it with standardwebhooks', async () => {
    const row = paymentEventRow({ gatewayChargeId: 'pay_12.3*>' });
    assert.deepEqual(await transport().send(signedOutgoing(row, SECRET)), { kind: 'delivered', status: null });
    await waitFor(() => consumer.received.some((e) => e.webhookId === row.id), { message: 'the message on the stream' });
    assert.equal(consumer.unverified, 0);
    assert.deepEqual(consumer.misaddressed, [], 'Nats-Msg-Id is the event id');
    assert.equal(consumer.routes.get(row.id), `${stream.subjectPrefix}.stripe.pay_12%2E3%2A%3E`, 'dots and wildcards in the charge id are escaped');
  });

  test('the same event published again (a resend after a crash) is acked, and the stream keeps it once (Nats-Msg-Id deduplication)', async () => {
    const jet = transport();
    const outgoing = signedOutgoing(paymentEventRow({ gatewayChargeId: 'ch_twice' }), SECRET);
    const before = (await stream.manager.streams.info(stream.name)).state.messages;
    assert.equal((await jet.send(outgoing)).kind, 'delivered');
    assert.equal((await jet.send(signedOutgoing(outgoing.event, SECRET))).kind, 'delivered');
    assert.equal((await stream.manager.streams.info(stream.name)).state.messages, before + 1);
  });

  test('no stream captures the subject: a failed attempt that says so; a stream other than the configured one: refused', async () => {
    const nowhere = await transport({ subjectPrefix: `${stream.subjectPrefix}-nowhere` }).send(signedOutgoing(paymentEventRow(), SECRET));
    assert.match(
      nowhere.kind === 'failed' ? nowhere.error : '',
      /no JetStream stream captures subject "test-transport-[0-9a-f]+-nowhere\.stripe\.ch_transport_1" \(no responders\)/,
    );
    const other = await transport({ stream: 'SOME_OTHER_STREAM' }).send(signedOutgoing(paymentEventRow(), SECRET));
    assert.match(other.kind === 'failed' ? other.error : '', /JetStream did not store it: expected stream does not match/);
    assert.equal((await transport({ stream: stream.name }).send(signedOutgoing(paymentEventRow(), SECRET))).kind, 'delivered');
  });
});

describe('NATS transport: a server that cannot be reached', { skip }, () => {
  test('a refused connection is a failed attempt; within the reconnect backoff the next fails at once with the same cause', async () => {
    const down = transport({ host: `127.0.0.1:${await freePort()}` });
    const first = await down.send(signedOutgoing(paymentEventRow(), SECRET));
    assert.match(first.kind === 'failed' ? first.error : '', /connection failed: /);
    const second = await down.send(signedOutgoing(paymentEventRow(), SECRET));
    assert.match(second.kind === 'failed' ? second.error : '', /connection failed: .*\(next attempt in [\d.]+ s\)/);
  });
});
