import { type ProviderConfig, secretEnvName } from './config.ts';
import { ConfigError } from '../errors.ts';
import { builtInDrivers } from '../gateways/registry.ts';
import type { ProviderDriver } from '../gateways/shared/webhook-driver.ts';
import { type ProviderRefetchConfig, resolveRefetchConfig } from '../refetch/settings.ts';
import { providerAccountsProblems } from './provider-accounts.ts';

/** What configuration says of a provider's accounts (INBOX_CONFIG `connect`, `knownAccounts`, and the accounts configured with a key or token). */
export interface ProviderAccounts {
  /** A platform's endpoint for many accounts: every account is expected unless `known` lists them. */
  connect: boolean;
  /** The accounts expected; undefined: none listed. */
  known: ReadonlySet<string> | undefined;
}

/** The accounts configured (`knownAccounts`, and those given a key or token) are the ones expected; none listed: any, on a connect provider. */
function expectedAccounts(config: ProviderConfig): ProviderAccounts {
  const listed = [...(config.refetch.knownAccounts ?? []), ...config.accounts.map(({ id }) => id)];
  return { connect: config.refetch.connect === true, known: listed.length > 0 ? new Set(listed) : undefined };
}

/** One configured provider: its driver plus the inbox's own per-provider settings. */
export interface ConfiguredProvider {
  name: string;
  driver: ProviderDriver;
  /** How long stored events (payloads) are kept; never shorter than the gateway's resend window. */
  retentionDays: number;
  /** How long their dedupe keys are kept: at least retentionDays, so also past the resend window. */
  keyRetentionDays: number;
  /** The gateway's own resend window: a purge inside it would let a late resend pass as new. */
  resendWindowDays: number;
  /** `create`: the first event seen for a charge creates the payment. `require`: the app creates it; events wait. */
  unknownPayment: 'create' | 'require';
  /** Per canonical kind: order by occurred_at or re-read the charge from the gateway API (src/refetch/settings.ts). */
  refetch: ProviderRefetchConfig;
  /** INBOX_CONFIG's `reconcile.settlementDays`, when set: else the gateway ledger's default. */
  settlementDays: number | undefined;
  /** The accounts it receives for (`connect`, `knownAccounts`): an event naming another is reported (docs/accounts.md). */
  accounts: ProviderAccounts;
}

function configuredProvider(config: ProviderConfig, problems: string[]): ConfiguredProvider | undefined {
  const { name } = config;
  const definition = builtInDrivers[config.driver];
  if (!definition) {
    problems.push(`provider "${name}": unknown driver "${config.driver}" (built-in drivers: ${Object.keys(builtInDrivers).join(', ')})`);
    return undefined;
  }
  if (config.accounts.length > 0) {
    if (!definition.attributesAccountsByToken) {
      problems.push(
        `provider "${name}": accounts with a webhook token each are for Asaas subaccounts; the ${config.driver} driver cannot tell an account's deliveries by their token`,
      );
      return undefined;
    }
    const accountProblems = providerAccountsProblems(name, config.accounts, config.secrets);
    if (accountProblems.length > 0) {
      problems.push(...accountProblems);
      return undefined;
    }
  }
  // An account's token authenticates its deliveries as a secret does.
  if (definition.requiresSecret && config.secrets.length === 0 && config.accounts.length === 0) {
    problems.push(`provider "${name}": no secret; set ${secretEnvName(name)} (comma-separated for rotation)`);
    return undefined;
  }
  const { retentionDays, keyRetentionDays } = config;
  const { resendWindowDays } = definition;
  // The payloads too: a late resend that says something else is only told apart while its stored
  // event is there to compare with (src/inbox/conflicting-duplicates.ts).
  if (retentionDays <= resendWindowDays) {
    problems.push(
      `provider "${name}": retention of ${retentionDays} days does not outlive the gateway's ${resendWindowDays}-day resend window; a late resend would pass as a new event`,
    );
    return undefined;
  }
  if (keyRetentionDays <= resendWindowDays) {
    problems.push(
      `provider "${name}": key retention of ${keyRetentionDays} days does not outlive the gateway's ${resendWindowDays}-day resend window; a late resend would pass as a new event`,
    );
    return undefined;
  }
  try {
    const accounts = config.accounts.map(({ id, token }) => ({ id, token }));
    const driver = definition.create({
      name,
      secrets: config.secrets,
      signatureToleranceSeconds: config.signatureToleranceSeconds,
      options: config.options,
      accounts,
    });
    const accountKeys = config.accounts.map(({ id, apiKey }) => ({ account: id, key: apiKey }));
    const refetch = resolveRefetchConfig(
      { provider: name, driver: config.driver, declared: config.refetch, envApiKey: config.envApiKey, accountKeys },
      problems,
    );
    return {
      name,
      driver,
      retentionDays,
      keyRetentionDays,
      resendWindowDays,
      unknownPayment: config.unknownPayment,
      refetch,
      settlementDays: config.reconcile.settlementDays,
      accounts: expectedAccounts(config),
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems.map((p) => `provider "${name}": ${p}`));
    return undefined;
  }
}

/**
 * Each configured provider checked against its built-in driver (known, given a secret if it needs
 * one, kept longer than its gateway resends), its driver built and its gateway API resolved.
 * Every problem is added to `problems`; a provider with one is left out.
 */
export function createConfiguredProviders(configs: Iterable<ProviderConfig>, problems: string[]): Map<string, ConfiguredProvider> {
  const providers = new Map<string, ConfiguredProvider>();
  for (const config of configs) {
    const provider = configuredProvider(config, problems);
    if (provider) providers.set(config.name, provider);
  }
  return providers;
}
