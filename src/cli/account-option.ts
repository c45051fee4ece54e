import type { GatewayApiTarget } from '../refetch/settings.ts';
import { usageError } from './exit-codes.ts';
import { requiredText } from './parse.ts';

/**
 * The account an operation reads on behalf of (`--account`, backfill and reconcile): one of the
 * provider's `accounts` (its own API key), or any account of a `connect` provider (read on its
 * behalf); exit 2 for anything else. Undefined: the provider's own.
 */
export function providerAccount(api: GatewayApiTarget, provider: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const account = requiredText(value, '--account');
  if (api.accountKeys) {
    if (api.accountKeys.has(account)) return account;
    throw usageError(`provider "${provider}" has no account "${account}" in INBOX_CONFIG accounts (${[...api.accountKeys.keys()].join(', ')}).`);
  }
  if (api.connect) return account;
  throw usageError(`provider "${provider}" has no accounts (INBOX_CONFIG accounts, or connect): --account names one of them.`);
}
