import { DEFAULT_BREAKER, DEFAULT_RATE_PER_SECOND, DEFAULT_TIMEOUT_MS, type DeclaredRefetch, apiKeyEnvName } from './config-keys.ts';
import { type PaymentKind, paymentKind, paymentStatuses } from '../domain/payments/payment-fact.ts';
import { builtInGateways, gatewayApis } from '../gateways/registry.ts';
import type { GatewayApi, GatewaySettings } from '../gateways/shared/gateway-api.ts';

/**
 * Per provider and per canonical kind: order by the event's own timestamp (`occurred_at`,
 * cheapest) or treat the webhook as a notice and re-read the charge from the gateway (`refetch`).
 */
export type OrderingStrategy = 'occurred_at' | 'refetch';

/** Everything needed to call one provider's gateway API. */
export interface GatewayApiTarget {
  provider: string;
  gateway: GatewayApi;
  baseUrl: string;
  key: string;
  settings: GatewaySettings;
  /** Per service instance: the gateway sees instances × this. */
  ratePerSecond: number;
  timeoutMs: number;
  breaker: { consecutiveFailures: number; halfOpenAfterMs: number };
  /**
   * Declared `connect` in INBOX_CONFIG: the key is a platform's, and an event's account is read on
   * its behalf (the gateway's accountHeaders), each account with its own rate limit and breaker.
   */
  connect?: boolean;
  /**
   * The accounts under the provider with an API key of their own (Asaas subaccounts, INBOX_CONFIG
   * `accounts`), by account id: an event of one is read with its key, never with `key`.
   */
  accountKeys?: ReadonlyMap<string, string>;
}

export interface ProviderRefetchConfig {
  /** The strategy for every canonical kind, defaults applied. */
  ordering: Readonly<Record<PaymentKind, OrderingStrategy>>;
  /** Undefined when the provider's gateway has no API here or no key is configured. */
  api: GatewayApiTarget | undefined;
  /** Said once at start: the kinds that fell back to occurred_at for want of an API key. */
  startupWarning: string | undefined;
}

export const allPaymentKinds: readonly PaymentKind[] = paymentStatuses.map(paymentKind);

/** Money leaves or may leave: worth an API call to be sure of the current state. */
export const highImpactKinds: readonly PaymentKind[] = ['payment.refunded', 'payment.partially_refunded', 'payment.disputed', 'payment.charged_back'];

/** Gateways whose webhook is only a notice (ids, hardly any state): every kind is re-read. Each gateway's module says so. */
const sendsThinNotifications = (gateway: GatewayApi | undefined): boolean => gateway !== undefined && builtInGateways[gateway.name]?.thinNotifications === true;

function builtInDefault(gateway: GatewayApi | undefined, kind: PaymentKind): OrderingStrategy {
  if (!gateway) return 'occurred_at';
  if (sendsThinNotifications(gateway)) return 'refetch';
  return highImpactKinds.includes(kind) ? 'refetch' : 'occurred_at';
}

interface RefetchInput {
  provider: string;
  driver: string;
  declared: DeclaredRefetch;
  /** GATEWAY_API_KEY_<PROVIDER>: wins over `api.key` in INBOX_CONFIG. */
  envApiKey: string | undefined;
  /** INBOX_CONFIG `accounts`: each account's own API key, when given. */
  accountKeys?: readonly { account: string; key: string | undefined }[];
}

function apiTarget(input: RefetchInput, gateway: GatewayApi, key: string, problems: string[]): GatewayApiTarget | undefined {
  const api = input.declared.api ?? {};
  const settings: GatewaySettings = Object.fromEntries(
    gateway.requiredSettings.map((setting) => {
      const value = api[setting];
      return [setting, typeof value === 'string' ? value : undefined];
    }),
  );
  const missing = gateway.requiredSettings.filter((setting) => !settings[setting]);
  if (missing.length > 0) {
    problems.push(`provider "${input.provider}": the ${gateway.name} API needs ${missing.map((m) => `api.${m}`).join(', ')} in INBOX_CONFIG`);
    return undefined;
  }
  return {
    provider: input.provider,
    gateway,
    baseUrl: api.baseUrl ?? gateway.defaultBaseUrl,
    key,
    settings,
    ratePerSecond: input.declared.ratePerSecond ?? DEFAULT_RATE_PER_SECOND,
    timeoutMs: api.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    breaker: { ...DEFAULT_BREAKER, ...api.breaker },
    connect: input.declared.connect === true,
    ...(input.accountKeys?.length ? { accountKeys: new Map(input.accountKeys.map(({ account, key: accountKey }) => [account, accountKey!])) } : {}),
  };
}

/**
 * The accounts' keys go with the provider's: with one, every account needs its own (its charges
 * are not readable with the provider's key); without one, none may have a key (nothing would read
 * with it, and the provider's own events could not be read at all).
 */
function accountKeyProblems(input: RefetchInput, key: string | undefined): string[] {
  const accounts = input.accountKeys ?? [];
  if (key) {
    return accounts
      .filter((account) => !account.key)
      .map(
        (account) =>
          `provider "${input.provider}": account "${account.account}" has no apiKey, and the provider has an API key (${apiKeyEnvName(input.provider)} or api.key): its charges could not be re-read; give it its own apiKey`,
      );
  }
  return accounts.some((account) => account.key)
    ? [
        `provider "${input.provider}": its accounts have API keys but the provider has none; set ${apiKeyEnvName(input.provider)} (or api.key) for its own account too`,
      ]
    : [];
}

function unknownGatewayProblem(input: RefetchInput, name: string): string {
  return `provider "${input.provider}": api.gateway "${name}" has no API mapping (known: ${Object.keys(gatewayApis).join(', ')})`;
}

/**
 * Resolves a provider's ordering strategy per kind and its gateway API settings. Explicit choices
 * win over `ordering.default`, which wins over the built-in defaults. A refetch that was chosen
 * explicitly, or that a thin-notification gateway needs, is a configuration problem without an
 * API key; a built-in default elsewhere falls back to occurred_at with one warning.
 */
export function resolveRefetchConfig(input: RefetchInput, problems: string[]): ProviderRefetchConfig {
  const { provider, declared } = input;
  const gatewayName = declared.api?.gateway ?? input.driver;
  const gateway = gatewayApis[gatewayName];
  if (declared.api?.gateway && !gateway) problems.push(unknownGatewayProblem(input, declared.api.gateway));
  const key = input.envApiKey || declared.api?.key;
  if (declared.connect && gateway && !gateway.accountHeaders) {
    problems.push(
      `provider "${provider}": connect is set, but the ${gateway.name} API has no way to read on behalf of an account (connect is for Stripe Connect)`,
    );
  }
  const keyProblems = gateway ? accountKeyProblems(input, key) : [];
  problems.push(...keyProblems);
  const api = gateway && key && keyProblems.length === 0 ? apiTarget(input, gateway, key, problems) : undefined;

  const ordering = {} as Record<PaymentKind, OrderingStrategy>;
  const explicitWithoutApi: PaymentKind[] = [];
  const defaultedWithoutKey: PaymentKind[] = [];
  for (const kind of allPaymentKinds) {
    const chosen = declared.ordering?.[kind] ?? declared.ordering?.default;
    const resolved = chosen ?? builtInDefault(gateway, kind);
    if (resolved === 'refetch' && !api) {
      if (chosen === 'refetch' || sendsThinNotifications(gateway)) explicitWithoutApi.push(kind);
      else defaultedWithoutKey.push(kind);
      ordering[kind] = 'occurred_at';
    } else {
      ordering[kind] = resolved;
    }
  }
  if (explicitWithoutApi.length > 0) problems.push(missingApiProblem(input, gateway, key, explicitWithoutApi));
  const startupWarning =
    defaultedWithoutKey.length > 0
      ? `provider "${provider}": no ${gateway?.name} API key (${apiKeyEnvName(provider)}), so ${defaultedWithoutKey.join(', ')} are ordered by occurred_at instead of being re-read from the gateway`
      : undefined;
  return { ordering, api, startupWarning };
}

function missingApiProblem(input: RefetchInput, gateway: GatewayApi | undefined, key: string | undefined, kinds: PaymentKind[]): string {
  const what = kinds.length === allPaymentKinds.length ? 'every kind' : kinds.join(', ');
  if (!gateway) {
    return `provider "${input.provider}": refetch is chosen for ${what}, but driver "${input.driver}" has no gateway API to re-read from (set api.gateway to one of ${Object.keys(gatewayApis).join(', ')}, or order by occurred_at)`;
  }
  if (key) return `provider "${input.provider}": refetch is chosen for ${what}, but the ${gateway.name} API settings are incomplete (see above)`;
  const why = sendsThinNotifications(gateway) ? `${gateway.name} notifications are thin, so refetch is the default` : 'refetch is chosen';
  return `provider "${input.provider}": ${why} for ${what} and needs an API key: set ${apiKeyEnvName(input.provider)} (or api.key in INBOX_CONFIG), or set "ordering": {"default": "occurred_at"} to order by the notification's timestamp`;
}

/** The providers that have a gateway API to re-read from: the refetcher's targets. */
export function gatewayApiTargets(providers: Iterable<{ refetch: ProviderRefetchConfig }>): GatewayApiTarget[] {
  return [...providers].flatMap((provider) => (provider.refetch.api ? [provider.refetch.api] : []));
}
