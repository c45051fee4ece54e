import { z } from 'zod';
import { type PaymentFact, paymentKind, paymentStatuses } from './payment-fact.ts';

/**
 * A payment fact as kept in webhook_inbox.fact: "what this event meant when it was processed".
 * For a refetched event that is the gateway's snapshot, which its payload cannot reproduce.
 */
const splitShare = z.object({
  recipientId: z.string().min(1),
  ruleId: z.string().min(1).nullable(),
  amount: z.number().int().min(0).nullable(),
  percentage: z.number().min(0).max(100).nullable(),
  liable: z.boolean().nullable(),
  chargeProcessingFee: z.boolean().nullable(),
  chargeRemainderFee: z.boolean().nullable(),
});

const storedFact = z.object({
  chargeId: z.string().min(1),
  // Kept so payment_facts.legacy_key can name the key the payment may still be stored under.
  legacyChargeId: z.string().min(1).optional(),
  status: z.enum(paymentStatuses),
  occurredAt: z.iso.datetime({ offset: true }),
  amount: z.number().int().optional(),
  amountRefunded: z.number().int().optional(),
  currency: z.string().optional(),
  inquiry: z.enum(['opened', 'closed']).optional(),
  // Kept with the fact, not read from the payload again: the split outlives the payload (docs/payment-history.md).
  split: z.array(splitShare).min(1).optional(),
  snapshot: z.literal(true).optional(),
});

export type StoredFact = z.infer<typeof storedFact>;

export function toStoredFact(fact: PaymentFact): StoredFact {
  return {
    chargeId: fact.chargeId,
    legacyChargeId: fact.legacyChargeId,
    status: fact.status,
    occurredAt: fact.occurredAt.toISOString(),
    amount: fact.amount,
    amountRefunded: fact.amountRefunded,
    currency: fact.currency,
    inquiry: fact.inquiry,
    split: fact.split === undefined ? undefined : [...fact.split],
    snapshot: fact.snapshot,
  };
}

/** Undefined when the column holds nothing usable (never written, or written by another version). */
export function fromStoredFact(value: unknown): PaymentFact | undefined {
  const parsed = storedFact.safeParse(value);
  if (!parsed.success) return undefined;
  const { occurredAt, snapshot, inquiry, legacyChargeId, split, ...rest } = parsed.data;
  return {
    ...rest,
    kind: paymentKind(rest.status),
    occurredAt: new Date(occurredAt),
    ...(legacyChargeId ? { legacyChargeId } : {}),
    ...(inquiry ? { inquiry } : {}),
    ...(split ? { split } : {}),
    ...(snapshot ? { snapshot } : {}),
  };
}
