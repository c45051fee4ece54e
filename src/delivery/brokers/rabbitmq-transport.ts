import amqp, { type ChannelModel, type ConfirmChannel, type Message, type Options } from 'amqplib';
import type { Logger } from 'pino';
import type { EventTransport, OutgoingEvent } from '../event-transport.ts';
import type { PostResult } from '../post-event.ts';
import { BROKER_DELIVERED, boundedBy, brokerFailure, paymentRoutingKey, withinDeadline } from './broker-message.ts';
import { createReconnectGate } from './reconnect-gate.ts';

export interface RabbitmqDestination {
  name: string;
  /** amqp(s)://user:password@host:port/vhost: a secret, never logged. */
  url: string;
  exchange: string;
  /** A TCP connect's bound; a publish's whole wait is the destination's timeoutMs. */
  connectTimeoutMs: number;
  logger: Logger;
}

/** AMQP carries a routing key as a short string: a longer one cannot be sent at all. */
const MAX_ROUTING_KEY_BYTES = 255;
const CLOSE_TIMEOUT_MS = 5_000;

/** The confirm channel publishes go out on, and what the broker said on it. */
interface Link {
  channel: ConfirmChannel;
  /** Message ids the broker returned as unroutable, until their confirm (a basic.return precedes its basic.ack). */
  returned: Map<string, number>;
}

/** Whether the broker returned this message (mandatory, no queue bound): taken once, when its confirm arrives. */
function takeReturned(link: Link, messageId: string): boolean {
  const count = link.returned.get(messageId) ?? 0;
  if (count === 0) return false;
  if (count === 1) link.returned.delete(messageId);
  else link.returned.set(messageId, count - 1);
  return true;
}

/**
 * The message: the contract's body, the Standard Webhooks headers as AMQP headers (a consumer
 * verifies it as it would a POST), the event id as message-id. Persistent, so a durable queue keeps
 * it across a broker restart before the broker confirms it; mandatory, so a message no queue takes
 * comes back instead of vanishing.
 */
function messageOptions({ event, headers }: OutgoingEvent): Options.Publish {
  return {
    mandatory: true,
    persistent: true,
    messageId: event.id,
    type: `payment.${event.status}`,
    contentType: 'application/json',
    timestamp: Number(headers['webhook-timestamp']),
    appId: 'webhook-inbox',
    headers: { ...headers },
  };
}

/** One publish, answered by its publisher confirm: an ack is delivered, unless the broker returned it first. */
function publishConfirmed(link: Link, exchange: string, outgoing: OutgoingEvent, closeReason: () => string | undefined): Promise<PostResult> {
  const routingKey = paymentRoutingKey(outgoing.event);
  if (Buffer.byteLength(routingKey) > MAX_ROUTING_KEY_BYTES) {
    return Promise.resolve(
      brokerFailure(`the payment's routing key is longer than AMQP's ${MAX_ROUTING_KEY_BYTES} bytes: it cannot be published (inboxctl lanes skip)`),
    );
  }
  return new Promise((resolve) => {
    const confirmed = (error: unknown) => {
      if (error) {
        const reason = closeReason();
        resolve(
          brokerFailure(
            reason
              ? `the channel closed before the confirm: ${reason}`
              : `the broker did not take it (${error instanceof Error ? error.message : String(error)})`,
          ),
        );
      } else if (takeReturned(link, outgoing.event.id)) {
        resolve(brokerFailure(`unroutable: no queue is bound to exchange "${exchange}" for routing key "${routingKey}" (the broker returned it)`));
      } else {
        resolve(BROKER_DELIVERED);
      }
    };
    try {
      link.channel.publish(exchange, routingKey, Buffer.from(outgoing.body), messageOptions(outgoing), confirmed);
    } catch (error) {
      resolve(brokerFailure(`publish failed: ${closeReason() ?? (error instanceof Error ? error.message : String(error))}`));
    }
  });
}

/**
 * A RabbitMQ destination: one long-lived connection and one confirm channel per destination in this
 * process, shared by every lane (each waits for its own confirm). Opened at the first publish, and
 * again at the next publish after the broker closed it (a restart, a forced close, a channel error
 * such as a missing exchange), through the reconnect gate's backoff. The inbox declares nothing:
 * the exchange, queues and bindings are the consuming team's (docs/brokers.md).
 */
export function createRabbitmqTransport(destination: RabbitmqDestination): EventTransport {
  return new RabbitmqPublisher(destination);
}

class RabbitmqPublisher implements EventTransport {
  private connection: ChannelModel | undefined;
  private link: Link | undefined;
  private closing = false;
  /** The broker's last word on a closed connection or channel, for the publishes that close failed. */
  private lastCloseReason: string | undefined;
  private readonly gate = createReconnectGate({ connect: () => this.openLink(), now: () => performance.now() });

  private readonly destination: RabbitmqDestination;

  constructor(destination: RabbitmqDestination) {
    this.destination = destination;
  }

  send(outgoing: OutgoingEvent): Promise<PostResult> {
    return withinDeadline(this.publish(outgoing), outgoing.timeoutMs, 'publisher confirm', outgoing.signal);
  }

  async close(): Promise<void> {
    this.closing = true;
    const open = this.connection;
    [this.connection, this.link] = [undefined, undefined];
    if (open) await boundedBy(open.close(), CLOSE_TIMEOUT_MS, 'closing the RabbitMQ connection');
  }

  private async publish(outgoing: OutgoingEvent): Promise<PostResult> {
    if (this.closing) return brokerFailure('the inbox is shutting down');
    const link = this.link ?? (this.link = await this.gate.open());
    return publishConfirmed(link, this.destination.exchange, outgoing, () => this.lastCloseReason);
  }

  /** A confirm channel, on the open connection or a new one. */
  private async openLink(): Promise<Link> {
    if (!this.connection) {
      const opened = await this.connect();
      // close() ran while it connected: nothing may stay open after it.
      if (this.closing) {
        await opened.close().catch(() => {});
        throw new Error('the inbox is shutting down');
      }
      this.connection = opened;
    }
    const channel = await this.connection.createConfirmChannel();
    const link: Link = { channel, returned: new Map() };
    channel.on('return', (message: Message) => {
      const id = String(message.properties.messageId);
      link.returned.set(id, (link.returned.get(id) ?? 0) + 1);
    });
    channel.on('error', (error: Error) => {
      this.lastCloseReason = error.message;
      this.destination.logger.warn({ reason: error.message }, 'RabbitMQ closed the publishing channel: the next publish opens another');
    });
    channel.on('close', () => {
      if (this.link === link) this.link = undefined;
    });
    this.destination.logger.info({ exchange: this.destination.exchange }, 'connected to RabbitMQ (publisher confirms)');
    return link;
  }

  private async connect(): Promise<ChannelModel> {
    const { url, name, connectTimeoutMs, logger } = this.destination;
    const opened = await amqp.connect(url, { clientProperties: { connection_name: `webhook-inbox ${name}` }, timeout: connectTimeoutMs });
    this.lastCloseReason = undefined;
    opened.on('error', (error: Error) => {
      this.lastCloseReason = error.message;
    });
    opened.on('close', () => {
      if (this.connection === opened) [this.connection, this.link] = [undefined, undefined];
      if (!this.closing) logger.warn({ reason: this.lastCloseReason }, 'the RabbitMQ connection closed: the next publish reconnects');
    });
    opened.on('blocked', (reason: string) =>
      logger.warn({ reason }, 'RabbitMQ blocks publishing (a resource alarm): publishes wait for their confirms until it lifts'),
    );
    opened.on('unblocked', () => logger.info('RabbitMQ takes publishes again'));
    return opened;
  }
}
