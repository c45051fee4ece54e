import { type SqlExecutor } from '../db/client.ts';
import { fromStoredFact } from '../domain/payments/stored-fact.ts';
import type { ChargeSnapshot } from '../gateways/shared/gateway-api.ts';
import { findKnownResourceEvents } from '../inbox/sql/find-events.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';

/** A dry run found no snapshot of the charge stored: it is then predicted from the event's payload. */
export class NoStoredSnapshotError extends Error {
  readonly code = 'no_stored_snapshot';
  constructor(provider: string, chargeId: string) {
    super(`No gateway snapshot of ${provider} charge ${chargeId} is stored.`);
    this.name = 'NoStoredSnapshotError';
  }
}

/**
 * A refetcher for a replay's dry run that never calls a gateway: it answers with the newest
 * snapshot of the charge the inbox already keeps (webhook_inbox.fact of an event that was
 * refetched), and throws NoStoredSnapshotError when there is none. `has` is the real refetcher's,
 * so the payments handler asks exactly for the charges a real replay would re-read. A dry run
 * must not spend the gateway's rate limit, and an operator must be able to run it while the
 * gateway is down; what the gateway would answer now is the one thing it cannot predict.
 */
export function createStoredSnapshotRefetcher(real: Pick<ChargeRefetcher, 'has'>, inbox: SqlExecutor): ChargeRefetcher {
  return {
    has: (provider) => real.has(provider),
    breakerState: () => 'closed',
    async fetchCharge(provider, chargeId) {
      const rows = await findKnownResourceEvents(inbox, [{ provider, resourceId: chargeId }], []);
      let newest: ChargeSnapshot | undefined;
      for (const row of rows) {
        const fact = fromStoredFact(row.fact);
        if (!fact?.snapshot || fact.chargeId !== chargeId) continue;
        if (newest && newest.observedAt >= fact.occurredAt) continue;
        newest = {
          chargeId,
          status: fact.status,
          amount: fact.amount,
          amountRefunded: fact.amountRefunded ?? 0,
          currency: fact.currency,
          ...(fact.inquiry === undefined ? {} : { inquiryOpen: fact.inquiry === 'opened' }),
          observedAt: fact.occurredAt,
        };
      }
      if (!newest) throw new NoStoredSnapshotError(provider, chargeId);
      return newest;
    },
  };
}
