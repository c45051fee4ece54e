import { type JetStreamClient, jetstream } from '@nats-io/jetstream';
import { type NatsConnection, type NodeConnectionOptions, connect, headers as natsHeaders } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { EventTransport, OutgoingEvent } from '../event-transport.ts';
import type { PostResult } from '../post-event.ts';
import { BROKER_DELIVERED, boundedBy, brokerFailure, paymentRoutingKey, withinDeadline } from './broker-message.ts';
import { createReconnectGate } from './reconnect-gate.ts';

export interface NatsDestination {
  name: string;
  /** nats://[user:password@ | token@]host:port, or tls://… to require TLS: a secret, never logged. */
  url: string;
  subjectPrefix: string;
  /** The stream that must store the events (JetStream's expected-stream check); undefined: any that captures the subject. */
  stream: string | undefined;
  /** The first connect's bound; a publish's whole wait is the destination's timeoutMs. */
  connectTimeoutMs: number;
  logger: Logger;
}

const CLOSE_TIMEOUT_MS = 5_000;

/** The client's options from the destination's URL: the client reads only host:port there, so credentials become options. */
export function natsConnectOptions(destination: Pick<NatsDestination, 'name' | 'url' | 'connectTimeoutMs'>): NodeConnectionOptions {
  const url = new URL(destination.url);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    servers: `${url.hostname}:${url.port || 4222}`,
    name: `webhook-inbox ${destination.name}`,
    timeout: destination.connectTimeoutMs,
    ...(url.protocol === 'tls:' && { tls: {} }),
    ...(password ? { user, pass: password } : user ? { token: user } : {}),
    // Once connected, the client keeps reconnecting by itself, for as long as the process runs.
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
  };
}

/** What the lane records for a publish JetStream did not ack. */
function publishError(error: unknown, subject: string, prefix: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
  // No stream listens on the subject: the request had no responder, which the client calls "jetstream is not enabled".
  if (cause.includes('no responders')) return `no JetStream stream captures subject "${subject}" (no responders): add one for "${prefix}.>"`;
  return `JetStream did not store it: ${message}`;
}

/** The connection and whether it is up now: while the client reconnects, publishes fail at once, as a refused POST does. */
interface Link {
  connection: NatsConnection;
  js: JetStreamClient;
  up: boolean;
}

async function watchStatus(link: Link, logger: Logger): Promise<void> {
  for await (const status of link.connection.status()) {
    if (status.type === 'disconnect') {
      link.up = false;
      logger.warn('the NATS connection dropped: the client reconnects, publishes fail until it does');
    } else if (status.type === 'reconnect') {
      link.up = true;
      logger.info('reconnected to NATS');
    }
  }
}

/**
 * A NATS destination: every event a JetStream publish on `<subjectPrefix>.<provider>.<charge>`,
 * delivered once the stream acks it. Nats-Msg-Id is the event id, so the stream drops a resend it
 * still remembers (its duplicate window) and acks it as a duplicate. One long-lived connection per
 * destination in this process; the first is made at the first publish through the reconnect gate,
 * later ones by the client itself. The inbox creates no stream: that is the consuming team's.
 */
export function createNatsTransport(destination: NatsDestination): EventTransport {
  return new NatsPublisher(destination);
}

class NatsPublisher implements EventTransport {
  private link: Link | undefined;
  private closing = false;
  private readonly gate = createReconnectGate({ connect: () => this.openLink(), now: () => performance.now() });

  private readonly destination: NatsDestination;

  constructor(destination: NatsDestination) {
    this.destination = destination;
  }

  send(outgoing: OutgoingEvent): Promise<PostResult> {
    return withinDeadline(this.publish(outgoing), outgoing.timeoutMs, 'JetStream ack', outgoing.signal);
  }

  async close(): Promise<void> {
    this.closing = true;
    const open = this.link;
    this.link = undefined;
    if (open) await boundedBy(open.connection.close(), CLOSE_TIMEOUT_MS, 'closing the NATS connection');
  }

  private async publish(outgoing: OutgoingEvent): Promise<PostResult> {
    if (this.closing) return brokerFailure('the inbox is shutting down');
    const link = this.link ?? (this.link = await this.gate.open());
    if (!link.up) return brokerFailure('the NATS connection is down: the client is reconnecting');
    const { subjectPrefix, stream } = this.destination;
    const subject = `${subjectPrefix}.${paymentRoutingKey(outgoing.event)}`;
    const headers = natsHeaders();
    for (const [name, value] of Object.entries(outgoing.headers)) headers.set(name, value);
    headers.set('content-type', 'application/json');
    try {
      await link.js.publish(subject, outgoing.body, {
        msgID: outgoing.event.id,
        headers,
        timeout: outgoing.timeoutMs,
        ...(stream && { expect: { streamName: stream } }),
      });
      return BROKER_DELIVERED;
    } catch (error) {
      return brokerFailure(publishError(error, subject, subjectPrefix));
    }
  }

  private async openLink(): Promise<Link> {
    const { logger } = this.destination;
    const connection = await connect(natsConnectOptions(this.destination));
    if (this.closing) {
      await connection.close().catch(() => {});
      throw new Error('the inbox is shutting down');
    }
    const link: Link = { connection, js: jetstream(connection), up: true };
    watchStatus(link, logger).catch((error: unknown) => logger.warn({ err: error }, 'watching the NATS connection failed'));
    // Closed for good (closed by us, or the client gave up): the next publish connects anew.
    void connection.closed().then((error) => {
      if (this.link === link) this.link = undefined;
      if (!this.closing) logger.warn({ reason: error?.message }, 'the NATS connection closed: the next publish reconnects');
    });
    logger.info({ subjectPrefix: this.destination.subjectPrefix }, 'connected to NATS (JetStream publishes)');
    return link;
  }
}
