import { z } from 'zod';
import { paymentStatuses } from '../domain/payments/payment-fact.ts';
import { issueMessage } from './issue-message.ts';
import { parseJsonText } from '../format/json-parse.ts';

/** `payment.paid`, `payment.refunded`, …: the body's `type`, what a destination may filter on. */
export const paymentEventTypes = paymentStatuses.map((status) => `payment.${status}` as const);
export type PaymentEventType = (typeof paymentEventTypes)[number];

/** Where the inbox pushes payment events, and how hard it tries (src/delivery). */
export interface DestinationConfig {
  name: string;
  url: string;
  /** `whsec_<base64>`: the Standard Webhooks signing secret. Never logged. */
  secret: string;
  /** Only these providers' payments; undefined: every provider. */
  providers: readonly string[] | undefined;
  /** Only these event types; undefined: every type. */
  kinds: readonly PaymentEventType[] | undefined;
  /** Failed attempts at a lane's head event before the lane parks. */
  maxAttempts: number;
  /** One POST, from connecting to the last byte of the answer read. */
  timeoutMs: number;
  /** The first retry's delay; each further one doubles it (with jitter), up to retryDelayMaxSeconds. */
  retryDelaySeconds: number;
  retryDelayMaxSeconds: number;
  /**
   * This many lanes failing at once means the destination is down, not one payment's events: it
   * backs off as a whole (no lane spends attempts, none parks) until one probe gets a 2xx.
   */
  backoffAfterFailingLanes: number;
}

export const destinationDefaults = {
  maxAttempts: 8,
  timeoutMs: 15_000,
  retryDelaySeconds: 5,
  retryDelayMaxSeconds: 3600,
  backoffAfterFailingLanes: 5,
} as const;

const URL_PREFIX = 'DESTINATION_URL_';
const SECRET_PREFIX = 'DESTINATION_SECRET_';
const namePattern = /^[a-z0-9][a-z0-9-]{0,29}$/;

/** `DESTINATION_URL_ORDERS_EU` belongs to the destination `orders-eu`. */
export function destinationEnvName(prefix: 'URL' | 'SECRET', destination: string): string {
  return `DESTINATION_${prefix}_${destination.toUpperCase().replaceAll('-', '_')}`;
}

const optionsSchema = z.strictObject({
  providers: z.array(z.string().regex(namePattern, 'provider names are lower-case letters, digits and dashes')).min(1).optional(),
  kinds: z.array(z.enum(paymentEventTypes)).min(1).optional(),
  maxAttempts: z.number().int().min(1).max(100).optional(),
  timeoutMs: z.number().int().min(100).max(120_000).optional(),
  retryDelaySeconds: z.number().positive().max(86_400).optional(),
  retryDelayMaxSeconds: z.number().positive().max(7 * 86_400).optional(),
  backoffAfterFailingLanes: z.number().int().min(2).max(10_000).optional(),
});
type DestinationOptions = z.infer<typeof optionsSchema>;

const fileSchema = z.looseObject({
  destinations: z.record(z.string().regex(namePattern, 'destination names are lower-case letters, digits and dashes, at most 30'), optionsSchema).default({}),
});

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/** Refuses what would let a destination leak events or secrets: other schemes, plain http off this machine, credentials in the URL. */
function urlProblem(value: string, allowHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `must be an https:// URL (got ${url.protocol})`;
  if (url.username || url.password) return 'must not carry credentials (the signature authenticates the inbox)';
  if (url.protocol === 'http:' && !allowHttp && !isLoopback(url.hostname)) {
    return 'must be https:// (plain http is allowed only to loopback, or everywhere with DESTINATION_ALLOW_HTTP=1)';
  }
  return undefined;
}

/** Standard Webhooks: `whsec_` and the base64 of 24 to 64 random bytes. */
function secretProblem(value: string): string | undefined {
  if (!value.startsWith('whsec_')) return 'must be a Standard Webhooks secret, whsec_<base64>';
  const encoded = value.slice('whsec_'.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return 'must be whsec_ followed by base64';
  const bytes = Buffer.from(encoded, 'base64').length;
  if (bytes < 24 || bytes > 64) return `must hold 24 to 64 bytes of key (this one holds ${bytes}): e.g. whsec_$(openssl rand -base64 32)`;
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
  else if (secretProblem(secret)) problems.push(`${secretKey}: ${secretProblem(secret)}`);
  const merged = { ...destinationDefaults, ...options };
  if (merged.retryDelayMaxSeconds < merged.retryDelaySeconds) problems.push(`destination "${name}": retryDelayMaxSeconds must be at least retryDelaySeconds`);
  if (problems.length > before) return undefined;
  return { name, url: url!, secret: secret!, ...merged, providers: options.providers, kinds: options.kinds };
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
