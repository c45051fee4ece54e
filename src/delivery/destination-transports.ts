import type { Logger } from 'pino';
import type { DestinationConfig } from '../config/destinations-config.ts';
import type { EventTransport } from './event-transport.ts';
import { postEvent } from './post-event.ts';

function httpTransport(url: string): EventTransport {
  return {
    send: ({ body, headers, timeoutMs, signal, timers }) => postEvent({ url, headers, body, timeoutMs, signal, timers }),
    // The keep-alive agents are shared by every HTTP destination and end with the process.
    close: async () => {},
  };
}

/**
 * One transport per destination, each long-lived in this process. A broker's client library is
 * loaded here and only here, when a destination of its kind is configured: an inbox without one
 * never loads it. No connection is opened yet: the first event connects, so a broker that is down
 * at start is a destination that is down, backed off like any other, not a service that cannot start.
 */
export async function createEventTransports(destinations: readonly DestinationConfig[], logger: Logger): Promise<Map<string, EventTransport>> {
  const transports = new Map<string, EventTransport>();
  for (const destination of destinations) {
    const { transport, name, url } = destination;
    const log = logger.child({ destination: name });
    if (transport.kind === 'rabbitmq') {
      const { createRabbitmqTransport } = await import('./brokers/rabbitmq-transport.ts');
      transports.set(name, createRabbitmqTransport({ name, url, exchange: transport.exchange, connectTimeoutMs: destination.timeoutMs, logger: log }));
    } else if (transport.kind === 'nats') {
      const { createNatsTransport } = await import('./brokers/nats-transport.ts');
      transports.set(
        name,
        createNatsTransport({
          name,
          url,
          subjectPrefix: transport.subjectPrefix,
          stream: transport.stream,
          connectTimeoutMs: destination.timeoutMs,
          logger: log,
        }),
      );
    } else {
      transports.set(name, httpTransport(url));
    }
  }
  return transports;
}

/** At shutdown, after the workers have stopped: a close that fails is logged, never thrown (the rest still close). */
export async function closeEventTransports(transports: ReadonlyMap<string, EventTransport>, logger: Logger): Promise<void> {
  await Promise.all(
    [...transports].map(([destination, transport]) =>
      transport.close().catch((error: unknown) => logger.warn({ destination, err: error }, 'closing the connection to a destination failed')),
    ),
  );
}
