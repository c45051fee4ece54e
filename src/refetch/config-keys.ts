import { z } from 'zod';
import { type PaymentKind, paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import { gatewayApis } from '../gateways/registry.ts';

const strategy = z.enum(['occurred_at', 'refetch']);

const paymentKinds: readonly PaymentKind[] = paymentStatuses.map(paymentKind);

/** What ./settings.ts resolves an unset key to; beside the keys so that docs/configuration.md states them. */
export const DEFAULT_RATE_PER_SECOND = 10;
export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_BREAKER = { consecutiveFailures: 5, halfOpenAfterMs: 30_000 };

/** The `api` keys a gateway's API needs besides the key (Zoop: `marketplaceId`), as its folder declares them. */
const gatewaySettingKeys: Record<string, z.ZodOptional<z.ZodString>> = Object.fromEntries(
  Object.values(gatewayApis).flatMap((api) =>
    api.requiredSettings.map((setting) => [
      setting,
      z.string().min(1).optional().describe(`Required by the \`${api.name}\` API ([Gateways](gateways.md#ordering-strategy-occurred_at-vs-refetch)).`),
    ]),
  ),
);

/**
 * The refetch strategy's per-provider keys of INBOX_CONFIG (stripped before the driver sees the
 * rest); what they mean is ./settings.ts's to resolve. The meanings are rendered into
 * docs/configuration.md (`npm run docs:config`).
 */
export const refetchFileKeys = {
  api: z
    .strictObject({
      gateway: z
        .string()
        .min(1)
        .optional()
        .meta({
          whenUnset: "the driver's name",
          description: `Which API mapping to use (${Object.keys(gatewayApis)
            .map((name) => `\`${name}\``)
            .join(', ')}), e.g. for a gateway received through the generic \`token\` driver.`,
        }),
      baseUrl: z
        .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
        .optional()
        .meta({ whenUnset: "the gateway's production API", description: 'Where the API is: a sandbox, a proxy, or a local fake in tests.' }),
      key: z.string().min(1).optional().describe('The API key, if not in `GATEWAY_API_KEY_<PROVIDER>` (the environment wins).'),
      ...gatewaySettingKeys,
      timeoutMs: z
        .number()
        .int()
        .min(100)
        .max(60_000)
        .optional()
        .meta({ whenUnset: `\`${DEFAULT_TIMEOUT_MS}\``, description: 'Per request, body included (`AbortSignal.timeout`).' }),
      breaker: z
        .strictObject({
          consecutiveFailures: z
            .number()
            .int()
            .min(1)
            .max(1000)
            .optional()
            .meta({
              whenUnset: `\`${DEFAULT_BREAKER.consecutiveFailures}\``,
              description: 'When the circuit breaker opens: after this many failures in a row.',
            }),
          halfOpenAfterMs: z
            .number()
            .int()
            .min(100)
            .max(3_600_000)
            .optional()
            .meta({ whenUnset: `\`${DEFAULT_BREAKER.halfOpenAfterMs}\``, description: 'How long the circuit breaker stays open.' }),
        })
        .optional(),
    })
    .optional(),
  ordering: z
    .strictObject(
      Object.fromEntries(['default', ...paymentKinds].map((key) => [key, strategy.optional()])) as Record<
        'default' | PaymentKind,
        z.ZodOptional<typeof strategy>
      >,
    )
    .optional()
    .meta({
      whenUnset: "the gateway's defaults",
      description:
        '`{ "default"?: …, "<kind>"?: … }`, each `occurred_at` or `refetch`: a kind\'s entry wins over `default`, which wins over the gateway\'s defaults ([Ordering strategy](gateways.md#ordering-strategy-occurred_at-vs-refetch)).',
    }),
  ratePerSecond: z
    .number()
    .positive()
    .max(10_000)
    .optional()
    .meta({
      whenUnset: `\`${DEFAULT_RATE_PER_SECOND}\``,
      description: 'Most API calls per rolling second, **per service instance** (for a `connect` provider: per account read on behalf of, and per instance).',
    }),
  connect: z.boolean().optional().meta({
    whenUnset: '`false`',
    description:
      "A platform's endpoint for many accounts (Stripe Connect): each event's `account` is recorded, and its charge is re-read, listed (`inboxctl backfill --account`) and reconciled on that account's behalf (`Stripe-Account`), with a rate limit and a circuit breaker per account ([Accounts](accounts.md)).",
  }),
  knownAccounts: z.array(z.string().min(1).max(150)).optional().meta({
    whenUnset: 'every account is expected',
    description:
      'The accounts this provider expects events for. An event naming another one is still stored and folded, never refused; it is reported once per account (a warning in the log, `inbox_unknown_accounts_total` in /metrics). On a `connect` provider the reconciliation cron reads each of their ledgers, beside those of the accounts its payments name ([Accounts](accounts.md)).',
  }),
};

export interface DeclaredRefetch {
  /** Its known keys, and each gateway API's own settings by name (gatewaySettingKeys; Zoop: `marketplaceId`). */
  api?: z.infer<typeof refetchFileKeys.api> & { readonly [setting: string]: unknown };
  ordering?: z.infer<typeof refetchFileKeys.ordering>;
  ratePerSecond?: number;
  connect?: boolean;
  knownAccounts?: readonly string[];
}

const API_KEY_PREFIX = 'GATEWAY_API_KEY_';

/** A variable named after its provider, which no zod key can carry: its meaning, for docs/configuration.md. */
export const apiKeyVariable = {
  name: `${API_KEY_PREFIX}<PROVIDER>`,
  description:
    "The gateway API key (Stripe `sk_…`/`rk_…`, Pagar.me `sk_…`, Asaas `$aact_…`, Zoop, Mercado Pago access token) used to re-read a charge's true state for the kinds ordered by `refetch` (see [Ordering strategy](gateways.md#ordering-strategy-occurred_at-vs-refetch)). Named like `WEBHOOK_SECRET_<PROVIDER>`; wins over `api.key` in `INBOX_CONFIG`. Without it, Mercado Pago and Zoop refuse to start (their notifications are thin) and other gateways order every kind by `occurred_at`, with one warning at start.",
};

/** `GATEWAY_API_KEY_STRIPE_BR` holds the API key of the provider `stripe-br`. */
export function apiKeyEnvName(provider: string): string {
  return API_KEY_PREFIX + provider.toUpperCase().replaceAll('-', '_');
}
