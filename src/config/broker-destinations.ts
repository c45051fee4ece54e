import { z } from 'zod';

/**
 * How a destination's events leave the inbox: an HTTP POST, or a publish to the team's broker
 * (src/delivery/brokers). The kind follows from the URL's scheme, so a destination cannot say one
 * thing in its URL and another in its options.
 */
export type DestinationTransport =
  | { kind: 'http' }
  /** Published to `exchange` with a routing key per payment, publisher confirms, mandatory. */
  | { kind: 'rabbitmq'; exchange: string }
  /** Published to JetStream on `<subjectPrefix>.<provider>.<charge>`, Nats-Msg-Id = the event id. */
  | { kind: 'nats'; subjectPrefix: string; stream: string | undefined };

export type TransportKind = DestinationTransport['kind'];

/** Both brokers default to one name teams can grep for: an exchange, or a subject's first token. */
export const DEFAULT_BROKER_NAME = 'payment-events';

const schemes: Record<string, TransportKind> = {
  'https:': 'http',
  'http:': 'http',
  'amqps:': 'rabbitmq',
  'amqp:': 'rabbitmq',
  'tls:': 'nats',
  'nats:': 'nats',
};
const encrypted = new Set(['https:', 'amqps:', 'tls:']);

export function transportKindOf(url: URL): TransportKind | undefined {
  return schemes[url.protocol];
}

// RabbitMQ's own rule for exchange names (and at most 127 characters); the default exchange ("") is
// not allowed: it routes by queue name, and a routing key per payment would name no queue.
const exchangeName = z.string().regex(/^[A-Za-z0-9_.:-]{1,127}$/, 'exchange names are 1 to 127 letters, digits, "-", "_", "." or ":"');
// A subject's tokens are separated by dots; none may be empty or hold a wildcard or whitespace.
const subjectPrefix = z
  .string()
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'a subject prefix is dot-separated tokens of letters, digits, "-" and "_" (no wildcards)');
const streamName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'stream names are 1 to 64 letters, digits, "-" or "_"');

/** INBOX_CONFIG's `destinations.<name>.rabbitmq` and `.nats`, beside the options every destination has. */
export const brokerOptionsShape = {
  rabbitmq: z
    .strictObject({
      exchange: exchangeName
        .optional()
        .meta({ whenUnset: `\`${DEFAULT_BROKER_NAME}\``, description: 'The exchange every event is published to ([Brokers](brokers.md)).' }),
    })
    .optional(),
  nats: z
    .strictObject({
      subjectPrefix: subjectPrefix
        .optional()
        .meta({ whenUnset: `\`${DEFAULT_BROKER_NAME}\``, description: 'Events go to `<subjectPrefix>.<provider>.<charge_id>`.' }),
      stream: streamName
        .optional()
        .meta({ whenUnset: 'none', description: 'JetStream must store the event in this stream (its expected-stream check), or the attempt fails.' }),
    })
    .optional(),
};

interface BrokerOptions {
  rabbitmq?: { exchange?: string | undefined } | undefined;
  nats?: { subjectPrefix?: string | undefined; stream?: string | undefined } | undefined;
}

/**
 * A broker URL may carry the broker's credentials (it has no other way to get them here): the
 * variable is then a secret, and the inbox never logs or shows it. Unencrypted transport goes only
 * to loopback unless DESTINATION_ALLOW_HTTP=1, as for HTTP: the events are payment data.
 */
export function brokerUrlProblem(url: URL, allowPlain: boolean, isLoopback: (hostname: string) => boolean): string | undefined {
  if (url.hostname === '') return 'must name the broker host';
  if (encrypted.has(url.protocol) || allowPlain || isLoopback(url.hostname)) return undefined;
  const tls = url.protocol === 'amqp:' ? 'amqps://' : 'tls://';
  return `must be ${tls} (plain ${url.protocol}// is allowed only to loopback, or everywhere with DESTINATION_ALLOW_HTTP=1)`;
}

/** The transport for a destination of `kind`; a broker's options on a destination of another kind are a problem. */
export function destinationTransport(name: string, kind: TransportKind, options: BrokerOptions, problems: string[]): DestinationTransport {
  for (const other of ['rabbitmq', 'nats'] as const) {
    if (options[other] && other !== kind)
      problems.push(`destination "${name}": "${other}" options need a ${other === 'rabbitmq' ? 'amqp:// or amqps://' : 'nats:// or tls://'} URL`);
  }
  if (kind === 'rabbitmq') return { kind, exchange: options.rabbitmq?.exchange ?? DEFAULT_BROKER_NAME };
  if (kind === 'nats') return { kind, subjectPrefix: options.nats?.subjectPrefix ?? DEFAULT_BROKER_NAME, stream: options.nats?.stream };
  return { kind };
}
