import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import amqp, { type ChannelModel } from 'amqplib';

const run = promisify(execFile);

/** The machine's RabbitMQ (guest/guest on loopback); TEST_RABBITMQ_HOST:PORT elsewhere. */
const HOST = process.env.TEST_RABBITMQ_HOST ?? '127.0.0.1:5672';

/** `amqp://guest:guest@<host>/<vhost>`: the default guest user, which RabbitMQ admits only from loopback. */
export function rabbitmqUrl(vhost: string, host = HOST): string {
  return `amqp://guest:guest@${host}/${encodeURIComponent(vhost)}`;
}

async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['--quiet', ...args], { timeout: 60_000 });
  return stdout;
}

/**
 * Why this machine cannot run the RabbitMQ tests, or undefined when it can: they need the broker
 * and `rabbitmqctl` (each test file makes a vhost of its own, and the restart test closes that
 * vhost's connections from the broker's side).
 */
export async function rabbitmqUnavailable(): Promise<string | undefined> {
  try {
    const connection = await amqp.connect(rabbitmqUrl('/'), { timeout: 3_000 });
    await connection.close();
  } catch (error) {
    return `no RabbitMQ at ${HOST} (${error instanceof Error ? error.message : String(error)})`;
  }
  try {
    await rabbitmqctl('list_vhosts');
  } catch (error) {
    return `rabbitmqctl cannot manage the broker here (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  }
  return undefined;
}

export interface ScratchVhost {
  name: string;
  url: string;
  /** A connection of the test's own (e.g. to declare the topology), closed at drop(). */
  connect(): Promise<ChannelModel>;
  /** What a broker restart does to its clients: the broker closes every connection (320 CONNECTION_FORCED). */
  closeConnections(): Promise<void>;
  /** While refused, no connection to the vhost is accepted: the broker is "down" for this vhost only. */
  refuseConnections(): Promise<void>;
  acceptConnections(): Promise<void>;
  /** Deletes the vhost with everything in it. */
  drop(): Promise<void>;
}

/**
 * A vhost of the test file's own, so its exchanges, queues and forced closes touch nobody else's
 * work on the shared broker.
 */
export async function createScratchVhost(label: string): Promise<ScratchVhost> {
  const name = `test-${label}-${randomBytes(4).toString('hex')}`;
  await rabbitmqctl('add_vhost', name);
  await rabbitmqctl('set_permissions', '-p', name, 'guest', '.*', '.*', '.*');
  const connections: ChannelModel[] = [];
  return {
    name,
    url: rabbitmqUrl(name),
    async connect() {
      const connection = await amqp.connect(rabbitmqUrl(name));
      connection.on('error', () => {});
      connections.push(connection);
      return connection;
    },
    closeConnections: async () => void (await rabbitmqctl('close_all_connections', '--vhost', name, 'test: a broker restart')),
    refuseConnections: async () => void (await rabbitmqctl('set_vhost_limits', '-p', name, '{"max-connections": 0}')),
    acceptConnections: async () => void (await rabbitmqctl('clear_vhost_limits', '-p', name)),
    async drop() {
      await Promise.all(connections.map((c) => c.close().catch(() => {})));
      await rabbitmqctl('delete_vhost', name);
    },
  };
}

/**
 * The topology docs/brokers.md describes for one consumer per payment order: a durable topic
 * exchange, and a durable queue bound to every routing key with single active consumer (one
 * consumer at a time reads it; a standby takes over where it stopped).
 */
export async function declareOrderedQueue(vhost: ScratchVhost, exchange: string, queue: string): Promise<void> {
  const connection = await vhost.connect();
  const channel = await connection.createChannel();
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: true, arguments: { 'x-single-active-consumer': true } });
  await channel.bindQueue(queue, exchange, '#');
  await channel.close();
}
