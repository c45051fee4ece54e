import type { Logger } from 'pino';
import type { ProviderAccounts } from '../config/configured-providers.ts';

export interface UnknownAccountWatch {
  /** A stored event named `account`: reported the first time an unexpected one is seen. */
  observe(provider: string, account: string): void;
}

/** Whether configuration expects events of this account: listed, or any on a connect provider that lists none. */
function isExpectedAccount(accounts: ProviderAccounts | undefined, account: string): boolean {
  if (accounts?.known) return accounts.known.has(account);
  return accounts?.connect === true;
}

/**
 * Events naming an account the configuration does not know are stored and folded like any other
 * (refusing them would lose money movements: the account may just be new), and said once per
 * (provider, account) per process: a warning naming both, and `count` (the
 * inbox_unknown_accounts_total counter). Bounded: past `maxRemembered` accounts, further ones are
 * still counted and logged, and remembered no more.
 */
export function createUnknownAccountWatch(deps: {
  accountsOf(provider: string): ProviderAccounts | undefined;
  logger: Logger;
  count(provider: string): void;
  maxRemembered?: number;
}): UnknownAccountWatch {
  const reported = new Set<string>();
  const maxRemembered = deps.maxRemembered ?? 10_000;
  return {
    observe(provider, account) {
      if (isExpectedAccount(deps.accountsOf(provider), account)) return;
      const key = `${provider}\u0000${account}`;
      if (reported.has(key)) return;
      if (reported.size < maxRemembered) reported.add(key);
      deps.count(provider);
      deps.logger.warn(
        { provider, account },
        'an event names an account the configuration does not know: stored and folded as usual; add it to knownAccounts (or declare the provider connect) if it is expected (docs/accounts.md)',
      );
    },
  };
}
