import { setTimeout as delay } from 'node:timers/promises';
import { jetstream } from '@nats-io/jetstream';
import { type MsgHdrs, connect } from '@nats-io/transport-node';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { Webhook } from 'standardwebhooks';
import { type ReceivedEvent, type VerifiedPayload, receivedEventOf } from './consumer.ts';

/** The application's side of a broker destination: what it took off the queue or stream, verified. */
export interface BrokerConsumer {
  /** Every message that verified, in the order it was taken. */
  readonly received: ReceivedEvent[];
  /** Messages whose signature did not verify with `standardwebhooks` (must stay 0). */
  readonly unverified: number;
  /** Messages whose broker-level message id is not their event's id (must stay empty). */
  readonly misaddressed: string[];
  /** The routing key (RabbitMQ) or subject (NATS) each event id came with. */
  readonly routes: Map<string, string>;
  acceptedFor(chargeId: string, provider?: string): ReceivedEvent[];
  close(): Promise<void>;
}

/**
 * Verifies each message as a consumer does, with the official `standardwebhooks` package over the
 * message's body and its webhook-* headers (never with the code under test), and records it.
 */
function createRecorder(secret: string) {
  const webhook = new Webhook(secret);
  const received: ReceivedEvent[] = [];
  const misaddressed: string[] = [];
  const routes = new Map<string, string>();
  let unverified = 0;
  return {
    received,
    misaddressed,
    routes,
    unverified: () => unverified,
    record(body: string, headers: Record<string, string>, brokerId: string | undefined, route: string): void {
      let payload: VerifiedPayload;
      try {
        payload = webhook.verify(body, headers) as VerifiedPayload;
      } catch {
        unverified += 1;
        return;
      }
      if (brokerId !== payload.id) misaddressed.push(`${payload.id}: broker message id ${brokerId}`);
      routes.set(payload.id, route);
      received.push(receivedEventOf(payload, headers['webhook-id']!, true));
    },
  };
}

type Recorder = ReturnType<typeof createRecorder>;

function consumerOf(recorder: Recorder, close: () => Promise<void>): BrokerConsumer {
  return {
    received: recorder.received,
    get unverified() {
      return recorder.unverified();
    },
    misaddressed: recorder.misaddressed,
    routes: recorder.routes,
    acceptedFor: (chargeId, provider = 'stripe') => recorder.received.filter((e) => e.chargeId === chargeId && e.provider === provider),
    close,
  };
}

function stringHeaders(headers: Record<string, unknown> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, Buffer.isBuffer(value) ? value.toString('utf8') : String(value)]));
}

/**
 * Consumes a RabbitMQ queue, acking each message once recorded. When the broker closes the
 * connection (a restart), it reconnects until it can, as a real consumer does: the messages it had
 * not acked are delivered again (repeats with the same id, which the test counts).
 */
export async function consumeRabbitmqQueue(url: string, queue: string, secret: string): Promise<BrokerConsumer> {
  const recorder = createRecorder(secret);
  let stopped = false;
  let current: ChannelModel | undefined;
  const onMessage = (channel: Channel) => (message: ConsumeMessage | null) => {
    if (!message) return;
    recorder.record(message.content.toString('utf8'), stringHeaders(message.properties.headers), message.properties.messageId, message.fields.routingKey);
    channel.ack(message);
  };
  const start = async (): Promise<void> => {
    const connection = await amqp.connect(url);
    current = connection;
    connection.on('error', () => {});
    connection.on('close', () => void (stopped || reconnect()));
    const channel = await connection.createChannel();
    await channel.prefetch(100);
    await channel.consume(queue, onMessage(channel));
  };
  const reconnect = async (): Promise<void> => {
    while (!stopped) {
      try {
        return await start();
      } catch {
        await delay(200);
      }
    }
  };
  await start();
  return consumerOf(recorder, async () => {
    stopped = true;
    await current?.close().catch(() => {});
  });
}

function natsHeaders(headers: MsgHdrs | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, values] of headers ?? []) record[name.toLowerCase()] = values[0]!;
  return record;
}

/** Reads a JetStream stream from its start with an ordered consumer (stream order, gaps impossible), recording each message. */
export async function consumeNatsStream(host: string, stream: string, secret: string): Promise<BrokerConsumer> {
  const recorder = createRecorder(secret);
  const connection = await connect({ servers: host, reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
  const consumer = await jetstream(connection).consumers.get(stream);
  const messages = await consumer.consume();
  const reading = (async () => {
    for await (const message of messages) {
      const headers = natsHeaders(message.headers);
      recorder.record(message.string(), headers, headers['nats-msg-id'], message.subject);
    }
  })();
  return consumerOf(recorder, async () => {
    messages.stop();
    await reading.catch(() => {});
    await connection.close();
  });
}
