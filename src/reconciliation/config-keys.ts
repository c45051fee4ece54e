import { z } from 'zod';

/**
 * The `reconcile` key of a provider in INBOX_CONFIG: `settlementDays`, how long after a payment
 * is first seen its credit may take to reach the ledger before its absence is a finding (the
 * gateway's own default otherwise: Stripe 2, Pagar.me 2, Asaas 35).
 */
export const reconcileFileKeys = {
  reconcile: z.strictObject({ settlementDays: z.number().int().min(0).max(180).optional() }).optional(),
};

export type DeclaredReconcile = NonNullable<z.infer<typeof reconcileFileKeys.reconcile>>;
