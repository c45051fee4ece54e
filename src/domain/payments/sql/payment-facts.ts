import { and, eq, inArray, or, sql } from 'drizzle-orm';
import type { Database, Transaction } from '../../../db/client.ts';
import type { ProviderFact } from '../fold-charges.ts';
import type { PaymentFact } from '../payment-fact.ts';
import { type ChargeKey, chargeKeysMatch } from './payments.ts';
import { paymentFacts, paymentFactsCarryOver } from '../schema.ts';
import { fromStoredFact } from '../stored-fact.ts';

/**
 * Every kept fact of these payment keys (payment_facts), on the (provider, payment_key) index. A
 * fact this version cannot read (a later version's status) is left out, as an unknown event is.
 */
export async function findPaymentFacts(tx: Database | Transaction, keys: readonly ChargeKey[]): Promise<ProviderFact[]> {
  if (keys.length === 0) return [];
  const rows = await tx
    .select({ provider: paymentFacts.provider, inboxId: paymentFacts.inboxId, fact: paymentFacts.fact })
    .from(paymentFacts)
    .where(chargeKeysMatch(paymentFacts.provider, paymentFacts.paymentKey, keys));
  return rows.flatMap(({ provider, inboxId, fact }) => {
    const parsed = fromStoredFact(fact);
    return parsed ? [{ provider, known: { inboxId, fact: parsed } }] : [];
  });
}

/**
 * Whether the one-time carry-over of facts settled before payment_facts existed is done: until it
 * is, the fold also reads the facts of the inbox rows it has not reached (processing/known-facts.ts).
 */
export async function isCarryOverFinished(tx: Database | Transaction): Promise<boolean> {
  const [row] = await tx
    .select({ finished: sql<boolean>`${paymentFactsCarryOver.carriedThroughInboxId} >= ${paymentFactsCarryOver.targetInboxId}` })
    .from(paymentFactsCarryOver);
  return row?.finished ?? true;
}

/** A kept fact with what fact retention needs: its keys and when it was written. */
export interface PrunableFact {
  eventId: string;
  inboxId: number;
  paymentKey: string;
  legacyKey: string | null;
  recordedAt: Date;
  /** Undefined: a fact this version cannot read (it still belongs to the payment, and goes with the others). */
  fact: PaymentFact | undefined;
}

/**
 * Facts older than `cutoff`, oldest first, after the (recorded_at, event_id) cursor: the walk fact
 * retention makes along the (provider, recorded_at) index. Facts kept because their payment is
 * still active stay behind the cursor instead of being read again by every batch.
 */
export async function selectOldFacts(
  tx: Database | Transaction,
  provider: string,
  cutoff: Date,
  after: { recordedAt: Date; eventId: string } | undefined,
  limit: number,
): Promise<Array<{ paymentKey: string; recordedAt: Date; eventId: string }>> {
  return tx
    .select({ paymentKey: paymentFacts.paymentKey, recordedAt: paymentFacts.recordedAt, eventId: paymentFacts.eventId })
    .from(paymentFacts)
    .where(
      sql`${paymentFacts.provider} = ${provider} and ${paymentFacts.recordedAt} < ${cutoff.toISOString()}::timestamptz
        ${after ? sql`and (${paymentFacts.recordedAt}, ${paymentFacts.eventId}) > (${after.recordedAt.toISOString()}::timestamptz, ${after.eventId})` : sql``}`,
    )
    .orderBy(paymentFacts.recordedAt, paymentFacts.eventId)
    .limit(limit);
}

/** Every fact of one provider kept under these keys, as payment key or as legacy key. */
export async function findFactsOfKeys(tx: Transaction, provider: string, keys: readonly string[]): Promise<PrunableFact[]> {
  if (keys.length === 0) return [];
  const rows = await tx
    .select()
    .from(paymentFacts)
    .where(and(eq(paymentFacts.provider, provider), or(inArray(paymentFacts.paymentKey, [...keys]), inArray(paymentFacts.legacyKey, [...keys]))));
  return rows.map((row) => ({
    eventId: row.eventId,
    inboxId: row.inboxId,
    paymentKey: row.paymentKey,
    legacyKey: row.legacyKey,
    recordedAt: row.recordedAt,
    fact: fromStoredFact(row.fact),
  }));
}

export async function deleteFacts(tx: Transaction, provider: string, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await tx.delete(paymentFacts).where(and(eq(paymentFacts.provider, provider), inArray(paymentFacts.eventId, [...eventIds])));
}
