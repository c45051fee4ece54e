import { z } from 'zod';
import { gatewayLedgers } from '../gateways/registry.ts';

/** Each ledger's own delay, as its gateway folder declares it: what an unset settlementDays means. */
const gatewayDefaults = Object.entries(gatewayLedgers)
  .map(([gateway, ledger]) => `${gateway} ${ledger.defaultSettlementDays}`)
  .join(', ');

/**
 * The `reconcile` key of a provider in INBOX_CONFIG: `settlementDays`, how long after a payment
 * is first seen its credit may take to reach the ledger before its absence is a finding (the
 * gateway's own default otherwise: Stripe 2, Pagar.me 2, Asaas 35).
 */
export const reconcileFileKeys = {
  reconcile: z
    .strictObject({
      settlementDays: z
        .number()
        .int()
        .min(0)
        .max(180)
        .optional()
        .meta({
          whenUnset: `the gateway's own (${gatewayDefaults})`,
          description:
            'Days after a payment is first seen before a paid payment without a credit in the ledger is a finding ([Reconciliation](reconciliation.md)).',
        }),
    })
    .optional(),
};

export type DeclaredReconcile = NonNullable<z.infer<typeof reconcileFileKeys.reconcile>>;
