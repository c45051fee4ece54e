import type { AppConfig } from '../config/load-config.ts';
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
  throw usageError(`${option ? `${option}: ` : ''}no provider "${provider}" is configured here (${list(configured)}) or has events in the inbox (${list(stored)}).`);
}
