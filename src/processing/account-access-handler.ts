import { type AccountAccessChange, recordAccountAccess } from '../refetch/account-access-sql.ts';
import type { AppliedEvent, EventHandler } from './handlers.ts';

/**
 * Stripe Connect: `account.application.deauthorized` says the connected account named by the
 * event's `account` disconnected the platform (docs.stripe.com/connect/webhooks), and
 * `account.application.authorized` that it connected (again). Kept in gateway_account_access:
 * while an account is deauthorized no gateway read is made on its behalf (refetch, backfill,
 * reconcile), and its events are still stored and folded from their payloads. An event that names
 * no account says nothing about one, and is ignored.
 */
const STATE_OF_TYPE = {
  'account.application.deauthorized': 'deauthorized',
  'account.application.authorized': 'authorized',
} as const;

export function createAccountAccessHandler(): EventHandler {
  return {
    name: 'account-access',
    kinds: Object.keys(STATE_OF_TYPE).map((type) => `stripe:${type}`),
    async apply(tx, batch): Promise<AppliedEvent[]> {
      const changes: (AccountAccessChange | undefined)[] = batch.map(({ event }) => {
        const state = STATE_OF_TYPE[event.stored.eventType as keyof typeof STATE_OF_TYPE];
        const account = event.stored.account;
        if (!state || !account) return undefined;
        return { provider: event.provider.name, account, state, eventId: event.stored.eventId, occurredAt: event.stored.occurredAt };
      });
      await recordAccountAccess(
        tx,
        changes.filter((change) => change !== undefined),
      );
      return changes.map((change): AppliedEvent => (change ? { outcome: 'processed' } : { outcome: 'ignored' }));
    },
  };
}
