import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import amqp from 'amqplib';
import { Webhook } from 'standardwebhooks';

/** The application's side of a destination in the bench: where the inbox sends, and when each event id was first taken. */
export interface BenchConsumer {
  /** What the events went through: `HTTP`, `RabbitMQ`, `NATS JetStream`. */
  label: string;
  /** The destination's variables (DESTINATION_URL_BENCH, …) and its INBOX_CONFIG entry, if any. */
  env: Record<string, string>;
  options?: Record<string, unknown>;
  answeredAt: Map<string, number>;
  counts: { repeats: number; unverified: number };
  /** The broker's process on this machine, when there is exactly one: its CPU is part of what a broker destination costs. */
  brokerPid?: number;
  close(): Promise<void>;
}

/** The one process named `comm` on this machine (a broker run by the system), or undefined when there is none or several. */
function onlyProcessNamed(comm: string): number | undefined {
  const pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && readComm(entry) === comm);
  return pids.length === 1 ? Number(pids[0]) : undefined;
}

function readComm(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

const RABBITMQ_HOST = process.env.BENCH_RABBITMQ_HOST ?? '127.0.0.1:5672';
const NATS_HOST = process.env.BENCH_NATS_HOST ?? '127.0.0.1:4222';

/** Verifies each message with `standardwebhooks` (as the HTTP consumer does each request) and notes when its id was first taken. */
function recorder() {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const webhook = new Webhook(secret);
  const answeredAt = new Map<string, number>();
  const counts = { repeats: 0, unverified: 0 };
  const take = (body: string, headers: Record<string, string>) => {
    try {
      webhook.verify(body, headers);
    } catch {
      counts.unverified += 1;
      return;
    }
    const id = headers['webhook-id']!;
    if (answeredAt.has(id)) counts.repeats += 1;
    else answeredAt.set(id, Date.now());
  };
  return { secret, answeredAt, counts, take };
}

/**
 * A durable exchange and queue of the run's own on the broker's default vhost (persistent messages
 * into a durable queue: the broker confirms once it has them on disk, as in production), consumed
 * with acks; both deleted at close. Undefined with the reason when no broker answers.
 */
export async function startRabbitmqConsumer(): Promise<BenchConsumer | string> {
  const url = `amqp://guest:guest@${RABBITMQ_HOST}/%2F`;
  let connection: amqp.ChannelModel;
  try {
    connection = await amqp.connect(url, { timeout: 3_000 });
  } catch (error) {
    return `no RabbitMQ at ${RABBITMQ_HOST} (${error instanceof Error ? error.message : String(error)})`;
  }
  const name = `bench-payment-events-${randomBytes(4).toString('hex')}`;
  const { secret, answeredAt, counts, take } = recorder();
  const channel = await connection.createChannel();
  await channel.assertExchange(name, 'topic', { durable: true });
  await channel.assertQueue(name, { durable: true });
  await channel.bindQueue(name, name, '#');
  await channel.prefetch(500);
  await channel.consume(name, (message) => {
    if (!message) return;
    const headers = Object.fromEntries(Object.entries(message.properties.headers ?? {}).map(([k, v]) => [k, String(v)]));
    take(message.content.toString('utf8'), headers);
    channel.ack(message);
  });
  return {
    label: 'RabbitMQ',
    brokerPid: onlyProcessNamed('beam.smp'),
    env: { DESTINATION_URL_BENCH: url, DESTINATION_SECRET_BENCH: secret },
    options: { rabbitmq: { exchange: name } },
    answeredAt,
    counts,
    async close() {
      await channel.deleteQueue(name);
      await channel.deleteExchange(name);
      await connection.close();
    },
  };
}

/** A JetStream stream of the run's own (file storage, the default), read with an ordered consumer; deleted at close. */
export async function startNatsConsumer(): Promise<BenchConsumer | string> {
  let connection: Awaited<ReturnType<typeof natsConnect>>;
  try {
    connection = await natsConnect({ servers: NATS_HOST, timeout: 3_000 });
  } catch (error) {
    return `no NATS at ${NATS_HOST} (${error instanceof Error ? error.message : String(error)})`;
  }
  const suffix = randomBytes(4).toString('hex');
  const stream = `BENCH_PAYMENT_EVENTS_${suffix}`;
  const subjectPrefix = `bench-payment-events-${suffix}`;
  const manager = await jetstreamManager(connection);
  await manager.streams.add({ name: stream, subjects: [`${subjectPrefix}.>`] });
  const { secret, answeredAt, counts, take } = recorder();
  const messages = await (await jetstream(connection).consumers.get(stream)).consume();
  const reading = (async () => {
    for await (const message of messages) {
      const headers: Record<string, string> = {};
      for (const [name, values] of message.headers ?? []) headers[name.toLowerCase()] = values[0]!;
      take(message.string(), headers);
    }
  })();
  return {
    label: 'NATS JetStream',
    brokerPid: onlyProcessNamed('nats-server'),
    env: { DESTINATION_URL_BENCH: `nats://${NATS_HOST}`, DESTINATION_SECRET_BENCH: secret },
    options: { nats: { subjectPrefix, stream } },
    answeredAt,
    counts,
    async close() {
      messages.stop();
      await reading.catch(() => {});
      await manager.streams.delete(stream);
      await connection.close();
    },
  };
}
