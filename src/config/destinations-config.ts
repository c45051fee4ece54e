import { z } from 'zod';
import { paymentStatuses } from '../domain/payments/payment-fact.ts';
import { parseDestinationSecrets } from './destination-secrets.ts';
import { type DestinationTransport, brokerOptionsShape, brokerUrlProblem, destinationTransport, transportKindOf } from './broker-destinations.ts';
import { issueMessage } from './issue-message.ts';
import { parseJsonText } from '../format/json-parse.ts';

/** `payment.paid`, `payment.refunded`, …: the body's `type`, what a destination may filter on. */
export const paymentEventTypes = paymentStatuses.map((status) => `payment.${status}` as const);
export type PaymentEventType = (typeof paymentEventTypes)[number];

/** Where the inbox pushes payment events, and how hard it tries (src/delivery). */
export interface DestinationConfig {
  name: string;
  /** An http(s) URL, or a broker's (amqp(s)://, nats:// or tls://, which may carry its credentials: never logged). */
  url: string;
  /** HTTP, or the broker the URL names (its scheme decides). */
  transport: DestinationTransport;
  /**
   * The Standard Webhooks signing secrets, each signing every event: `whsec_<base64>` (HMAC, `v1`)
   * or `whsk_<base64>` (ed25519, `v1a`). Two during a rotation. Never logged.
   */
  secrets: readonly string[];
  /** Only these providers' payments; undefined: every provider. */
  providers: readonly string[] | undefined;
  /** Only the payments of these gateway accounts (payments.account); undefined: every account, and the payments of none. */
  accounts?: readonly string[] | undefined;
  /** Only these event types; undefined: every type. */
  kinds: readonly PaymentEventType[] | undefined;
  /** Failed attempts at a lane's head event before the lane parks. */
  maxAttempts: number;
  /** One POST, from connecting to the last byte of the answer read; for a broker, one publish until its confirm. */
  timeoutMs: number;
  /** The first retry's delay; each further one doubles it (with jitter), up to retryDelayMaxSeconds. */
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /**
   * This many lanes failing at once means the destination is down, not one payment's events: it
   * backs off as a whole (no lane spends attempts, none parks) until one probe gets a 2xx.
   */
  backoffAfterFailingLanes: number;
  /**
   * How long a lane's head event may be answered 429 (or 503 with Retry-After) before those answers
   * count as attempts: a consumer that asks to wait is waited for (with backoff, never sooner than
   * it asked) this long before the lane can park.
   */
  patienceSeconds: number;
  /**
   * Where a destination added later starts: `now` (events written from when a worker first runs with
   * it), `beginning` (every payment's events), or a time (events written since then).
   */
  start: DestinationStart;
}

export type DestinationStart = 'now' | 'beginning' | Date;

export const destinationDefaults = {
  maxAttempts: 8,
  timeoutMs: 15_000,
  retryDelaySeconds: 5,
  retryDelayMaxSeconds: 3600,
  backoffAfterFailingLanes: 5,
  patienceSeconds: 3600,
} as const;

const URL_PREFIX = 'DESTINATION_URL_';
const SECRET_PREFIX = 'DESTINATION_SECRET_';

/** The destinations' variables, which no zod key can carry (named after the destination, or read as `1`/`0`): their meanings, for docs/configuration.md. */
export const destinationVariables = [
  {
    name: `${URL_PREFIX}<NAME>`,
    description:
      "With `DESTINATION_SECRET_<NAME>`, enables push destination `<name>`: an `https://…` URL, or a broker's (`amqps://…`, `tls://…`: [Brokers](brokers.md)); see [Destinations](destinations.md).",
  },
  {
    name: `${SECRET_PREFIX}<NAME>`,
    description:
      'With `DESTINATION_URL_<NAME>`: the signing secret, `whsec_<base64 of 24–64 bytes>` or `whsk_<base64 ed25519 seed>`, several space-separated during a rotation.',
  },
  {
    name: 'DESTINATION_ALLOW_HTTP',
    whenUnset: '`0`',
    description: "`1`: plain `http://` destinations (and a broker's `amqp://`, `nats://`) off loopback too.",
  },
];
const namePattern = /^[a-z0-9][a-z0-9-]{0,29}$/;

/** `DESTINATION_URL_ORDERS_EU` belongs to the destination `orders-eu`. */
export function destinationEnvName(prefix: 'URL' | 'SECRET', destination: string): string {
  return `DESTINATION_${prefix}_${destination.toUpperCase().replaceAll('-', '_')}`;
}

const startError = 'must be "now", "beginning" or an RFC 3339 time (2026-12-01T00:00:00Z)';

const byDefault = (key: keyof typeof destinationDefaults) => `\`${destinationDefaults[key]}\``;

/** INBOX_CONFIG's `destinations.<name>`, each key's meaning beside it (rendered into docs/configuration.md). */
export const destinationOptionsSchema = z.strictObject({
  providers: z
    .array(z.string().regex(namePattern, 'provider names are lower-case letters, digits and dashes'))
    .min(1)
    .optional()
    .meta({ whenUnset: 'all', description: 'Only payments that came through these inbox providers (each must be configured here).' }),
  accounts: z.array(z.string().min(1).max(150)).min(1).optional().meta({
    whenUnset: 'all',
    description:
      "Only payments of these gateway accounts (`payment.account`, a Stripe Connect `acct_…`): the destination has lanes for no other payment, a direct integration's included; each payment's events still go in order ([Accounts](accounts.md)).",
  }),
  kinds: z.array(z.enum(paymentEventTypes)).min(1).optional().meta({
    whenUnset: 'all',
    description: 'Only these event types. A filtered-out event is passed over; the next one sent says what it follows (`follows_sequence`).',
  }),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .meta({ whenUnset: byDefault('maxAttempts'), description: "Failed attempts at a lane's head event before the lane parks." }),
  timeoutMs: z
    .number()
    .int()
    .min(100)
    .max(120_000)
    .optional()
    .meta({
      whenUnset: byDefault('timeoutMs'),
      description:
        "One POST, connect to the last byte read (the answer's status decides); for a broker, one publish, from connecting to its confirm (RabbitMQ) or ack (JetStream).",
    }),
  retryDelaySeconds: z
    .number()
    .positive()
    .max(86_400)
    .optional()
    .meta({
      whenUnset: byDefault('retryDelaySeconds'),
      description:
        'The backoff: `retryDelay · 2^(failures−1) · (1..2)`, capped at `retryDelayMaxSeconds`. A `Retry-After` may lengthen a wait, never shorten it.',
    }),
  retryDelayMaxSeconds: z
    .number()
    .positive()
    .max(7 * 86_400)
    .optional()
    .meta({ whenUnset: byDefault('retryDelayMaxSeconds'), description: "The backoff's cap." }),
  backoffAfterFailingLanes: z
    .number()
    .int()
    .min(2)
    .max(10_000)
    .optional()
    .meta({
      whenUnset: byDefault('backoffAfterFailingLanes'),
      description: 'This many lanes failing (or throttled) at once means the destination as a whole is down or limiting.',
    }),
  patienceSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .optional()
    .meta({
      whenUnset: byDefault('patienceSeconds'),
      description:
        "How long a lane's head event may be answered 429 (or 503 with `Retry-After`) before those answers count as attempts. `0`: they count at once.",
    }),
  start: z
    .union([z.enum(['now', 'beginning']), z.iso.datetime({ offset: true, error: startError })], { error: startError })
    .optional()
    .meta({
      whenUnset: '`"now"`',
      description:
        'Where a destination added later starts: `"now"`, `"beginning"`, or an RFC 3339 time ([Where a destination added later starts](destinations.md#where-a-destination-added-later-starts)).',
    }),
  ...brokerOptionsShape,
});
type DestinationOptions = z.infer<typeof destinationOptionsSchema>;

const fileSchema = z.looseObject({
  destinations: z
    .record(z.string().regex(namePattern, 'destination names are lower-case letters, digits and dashes, at most 30'), destinationOptionsSchema)
    .default({}),
});

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * Refuses what would let a destination leak events or secrets: other schemes, plain transport off
 * this machine, credentials in an HTTP URL (a broker's URL carries them: broker-destinations.ts).
 */
function urlProblem(value: string, allowHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  const kind = transportKindOf(url);
  if (kind === undefined) return `must be an https:// URL, or a broker's amqps:// or tls:// (got ${url.protocol})`;
  if (kind !== 'http') return brokerUrlProblem(url, allowHttp, isLoopback);
  if (url.username || url.password) return 'must not carry credentials (the signature authenticates the inbox)';
  if (url.protocol === 'http:' && !allowHttp && !isLoopback(url.hostname)) {
    return 'must be https:// (plain http is allowed only to loopback, or everywhere with DESTINATION_ALLOW_HTTP=1)';
  }
  return undefined;
}

/** INBOX_CONFIG's `destinations`; a file that cannot be read is reported by the providers' reading of it. */
function declaredOptions(env: Env, readFile: (path: string) => string, problems: string[]): Record<string, DestinationOptions> {
  if (!env.INBOX_CONFIG) return {};
  let parsed: unknown;
  try {
    parsed = parseJsonText(readFile(env.INBOX_CONFIG));
  } catch {
    return {};
  }
  const file = fileSchema.safeParse(parsed);
  if (file.success) return file.data.destinations;
  problems.push(...file.error.issues.map((issue) => `INBOX_CONFIG ${env.INBOX_CONFIG}: ${issue.path.join('.')}: ${issueMessage(issue)}`));
  return {};
}

type Env = Record<string, string | undefined>;

function namesFromEnv(env: Env, problems: string[]): Set<string> {
  const names = new Set<string>();
  for (const [key, value] of Object.entries(env)) {
    const prefix = [URL_PREFIX, SECRET_PREFIX].find((p) => key.startsWith(p));
    if (!prefix || value === undefined) continue;
    const name = key.slice(prefix.length).toLowerCase().replaceAll('_', '-');
    // Only the upper-case name is ever read: taken as `orders`, DESTINATION_URL_orders would be
    // reported as "no URL; set DESTINATION_URL_ORDERS", as if it were not set at all.
    const upperCase = `${prefix}${key.slice(prefix.length).toUpperCase()}`;
    if (key !== upperCase) problems.push(`${key}: destination variables are named in upper case: ${upperCase}`);
    else if (namePattern.test(name)) names.add(name);
    else problems.push(`${key}: "${name}" is not a valid destination name`);
  }
  return names;
}

/**
 * Events of a provider the filter does not name are passed over for good (the lane moves on), so a
 * misspelt provider would silently send the destination nothing: only configured providers count.
 */
function unknownProviders(name: string, options: DestinationOptions, configured: ReadonlySet<string>): string[] {
  const known = [...configured].sort().join(', ') || 'none';
  return (options.providers ?? [])
    .filter((provider) => !configured.has(provider))
    .map((provider) => `destination "${name}": providers: "${provider}" is not a provider configured here (${known})`);
}

function createDestination(name: string, env: Env, options: DestinationOptions, allowHttp: boolean, problems: string[]): DestinationConfig | undefined {
  const urlKey = destinationEnvName('URL', name);
  const secretKey = destinationEnvName('SECRET', name);
  const url = env[urlKey];
  const secret = env[secretKey];
  const before = problems.length;
  if (url === undefined) problems.push(`destination "${name}": no URL; set ${urlKey}`);
  else if (urlProblem(url, allowHttp)) problems.push(`${urlKey}: ${urlProblem(url, allowHttp)}`);
  if (secret === undefined) problems.push(`destination "${name}": no secret; set ${secretKey} (whsec_<base64>)`);
  const secrets = secret === undefined ? undefined : parseDestinationSecrets(secretKey, secret, problems);
  const { providers, accounts, kinds, start, rabbitmq: _rabbitmq, nats: _nats, ...tuning } = options;
  const merged = { ...destinationDefaults, ...tuning };
  if (merged.retryDelayMaxSeconds < merged.retryDelaySeconds) problems.push(`destination "${name}": retryDelayMaxSeconds must be at least retryDelaySeconds`);
  const kind = url !== undefined && URL.canParse(url) ? transportKindOf(new URL(url)) : undefined;
  const transport = kind && destinationTransport(name, kind, options, problems);
  if (problems.length > before || !secrets) return undefined;
  return {
    name,
    url: url!,
    transport: transport!,
    secrets,
    ...merged,
    providers,
    accounts,
    kinds,
    start: start === undefined || start === 'now' || start === 'beginning' ? (start ?? 'now') : new Date(start),
  };
}

/**
 * Destinations in the gateways' convention: DESTINATION_URL_<NAME> and DESTINATION_SECRET_<NAME>
 * enable `<name>`; INBOX_CONFIG's `destinations.<name>` adds filters and options. Problems go to
 * `problems`, to be listed with every other configuration problem at once.
 */
export function loadDestinations(env: Env, readFile: (path: string) => string, problems: string[], providers: ReadonlySet<string>): DestinationConfig[] {
  const allowHttp = env.DESTINATION_ALLOW_HTTP === '1';
  if (env.DESTINATION_ALLOW_HTTP !== undefined && env.DESTINATION_ALLOW_HTTP !== '1' && env.DESTINATION_ALLOW_HTTP !== '0') {
    problems.push('DESTINATION_ALLOW_HTTP: must be 1 or 0');
  }
  const declared = declaredOptions(env, readFile, problems);
  const names = new Set([...namesFromEnv(env, problems), ...Object.keys(declared)]);
  const destinations: DestinationConfig[] = [];
  for (const name of [...names].sort()) {
    problems.push(...unknownProviders(name, declared[name] ?? {}, providers));
    const destination = createDestination(name, env, declared[name] ?? {}, allowHttp, problems);
    if (destination) destinations.push(destination);
  }
  return destinations;
}
