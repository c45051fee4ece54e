import type { AppConfig } from '../config/load-config.ts';
import { secretEnvName } from '../config/config.ts';
import { builtInDrivers } from '../gateways/registry.ts';
import type { RetentionPolicy } from '../operations/retention.ts';
import { type Database, drizzleExecutor } from '../db/client.ts';
import { listStoredProviders } from '../inbox/sql/counts.ts';
import { usageError } from './exit-codes.ts';

/**
 * A provider name an operator typed must be one this configuration knows or one the inbox holds
 * events of (a provider removed from the configuration still has rows to look at): a typo is a
 * usage error naming the known ones, not an empty answer that looks like "nothing failed".
 */
export async function requireKnownProvider(db: Database, config: AppConfig, provider: string, option?: string): Promise<void> {
  if (config.providers.has(provider)) return;
  const stored = await listStoredProviders(drizzleExecutor(db));
  if (stored.includes(provider)) return;
  const configured = [...config.providers.keys()];
  const list = (names: string[]) => (names.length === 0 ? 'none' : names.join(', '));
  throw usageError(
    `${option ? `${option}: ` : ''}no provider "${provider}" is configured here (${list(configured)}) or has events in the inbox (${list(stored)}).`,
  );
}

/**
 * The dedupe windows a purge must respect. Every configured provider's; and for one the inbox holds
 * events of that this environment does not configure (a terminal without WEBHOOK_SECRET_STRIPE) but
 * whose name is a built-in gateway's, the window the service gives that zero-config provider:
 * INBOX_RETENTION_DAYS (as read here, env file included) and the gateway's resend window, each such
 * assumption said in `notices`. A provider INBOX_CONFIG declares with a retention of its own is
 * known only where INBOX_CONFIG and its secret are (the env file carries both to every terminal).
 */
export function retentionPolicies(config: AppConfig, stored: readonly string[]): { policies: Map<string, RetentionPolicy>; notices: string[] } {
  const policies = new Map<string, RetentionPolicy>(config.providers);
  const notices: string[] = [];
  for (const name of stored) {
    const driver = builtInDrivers[name];
    if (policies.has(name) || !driver) continue;
    const { retentionDays, keyRetentionDays } = config.providerDefaults;
    policies.set(name, { name, retentionDays, keyRetentionDays, resendWindowDays: driver.resendWindowDays, unknownPayment: 'create' });
    notices.push(
      `${name} is not configured here (no ${secretEnvName(name)}): its dedupe window is taken as a zero-config ${name}'s, INBOX_RETENTION_DAYS (${retentionDays} days)`,
    );
  }
  return { policies, notices };
}
