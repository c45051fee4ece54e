import type { Database } from '../db/client.ts';
import { type PruneOutcome, checkpointQuietPayments } from '../domain/payments/fact-pruning.ts';
import { selectOldFacts } from '../domain/payments/sql/payment-facts.ts';

export interface FactPruneRequest {
  provider: string;
  /** Payments whose newest fact is older than this are quiet: their facts go, their state stays as a checkpoint. */
  cutoff: Date;
  /** The provider's unknownPayment mode is `require` (a fold starts from the application's row). */
  require: boolean;
  /** Old facts looked at per transaction. */
  batchSize: number;
  signal?: AbortSignal;
}

/**
 * The third tier of retention, after payloads and dedupe keys: one provider's payment facts, once
 * their payment has been quiet for its keyRetentionDays (docs/payment-history.md). Walks the facts
 * older than the cut-off, oldest first, a batch per transaction; each batch's payments are checked
 * again under their row locks (fact-pruning.ts) and either checkpointed or left, if active.
 * Answers the totals.
 */
export async function pruneQuietPaymentFacts(db: Database, request: FactPruneRequest): Promise<PruneOutcome> {
  const totals: PruneOutcome = { checkpointed: 0, withoutPayment: 0, active: 0, factsDeleted: 0 };
  let after: { recordedAt: Date; eventId: string } | undefined;
  for (;;) {
    if (request.signal?.aborted) return totals;
    const old = await selectOldFacts(db, request.provider, request.cutoff, after, request.batchSize);
    if (old.length === 0) return totals;
    const keys = [...new Set(old.map((fact) => fact.paymentKey))];
    const outcome = await db.transaction((tx) =>
      checkpointQuietPayments(tx, { provider: request.provider, keys, cutoff: request.cutoff, require: request.require }),
    );
    totals.checkpointed += outcome.checkpointed;
    totals.withoutPayment += outcome.withoutPayment;
    totals.active += outcome.active;
    totals.factsDeleted += outcome.factsDeleted;
    if (old.length < request.batchSize) return totals;
    after = old.at(-1)!;
  }
}
