import { type Database, drizzleExecutor } from '../db/client.ts';
import type { PaymentFact } from '../domain/payments/payment-fact.ts';
import { findPaymentFacts, isCarryOverFinished } from '../domain/payments/sql/payment-facts.ts';
import { fromStoredFact } from '../domain/payments/stored-fact.ts';
import type { ChargeSnapshot } from '../gateways/shared/gateway-api.ts';
import { findKnownResourceEvents } from '../inbox/sql/find-events.ts';
import type { ChargeRefetcher } from '../refetch/refetcher.ts';
import { CodedError } from '../errors.ts';

/** A dry run found no snapshot of the charge stored: it is then predicted from the event's payload. */
export class NoStoredSnapshotError extends CodedError {
  readonly code = 'no_stored_snapshot';
  constructor(provider: string, chargeId: string) {
    super(`No gateway snapshot of ${provider} charge ${chargeId} is stored.`);
  }
}

/**
 * A refetcher for a replay's dry run that never calls a gateway: it answers with the newest
 * snapshot of the charge already kept (payment_facts, and until the carry-over is done the inbox
 * rows it has not reached), and throws NoStoredSnapshotError when there is none. `has` is the real refetcher's,
 * so the payments handler asks exactly for the charges a real replay would re-read. A dry run
 * must not spend the gateway's rate limit, and an operator must be able to run it while the
 * gateway is down; what the gateway would answer now is the one thing it cannot predict.
 */
export function createStoredSnapshotRefetcher(real: Pick<ChargeRefetcher, 'has'>, db: Database): ChargeRefetcher {
  return {
    has: (provider) => real.has(provider),
    breakerState: () => 'closed',
    async fetchCharge(provider, chargeId) {
      let newest: ChargeSnapshot | undefined;
      for (const fact of await keptFacts(db, provider, chargeId)) {
        if (!fact?.snapshot || fact.chargeId !== chargeId) continue;
        if (newest && newest.observedAt >= fact.occurredAt) continue;
        newest = {
          chargeId,
          status: fact.status,
          amount: fact.amount,
          amountRefunded: fact.amountRefunded ?? 0,
          currency: fact.currency,
          ...(fact.inquiry === undefined ? {} : { inquiryOpen: fact.inquiry === 'opened' }),
          ...(fact.split === undefined ? {} : { split: fact.split }),
          observedAt: fact.occurredAt,
        };
      }
      if (!newest) throw new NoStoredSnapshotError(provider, chargeId);
      return newest;
    },
  };
}

async function keptFacts(db: Database, provider: string, chargeId: string): Promise<(PaymentFact | undefined)[]> {
  const notCarried = (await isCarryOverFinished(db))
    ? []
    : (await findKnownResourceEvents(drizzleExecutor(db), [{ provider, resourceId: chargeId }], [], { notCarriedOnly: true })).map((row) =>
        fromStoredFact(row.fact),
      );
  const kept = await findPaymentFacts(db, [{ provider, chargeId }]);
  return [...notCarried, ...kept.map(({ known }) => known.fact)];
}
