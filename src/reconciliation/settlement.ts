/** A ledger row as matching and the faces read it. */
export interface StoredEntry {
  entryId: string;
  kind: string;
  gatewayType: string;
  chargeId: string | null;
  paymentKey: string | null;
  payoutId: string | null;
  amount: number;
  fee: number;
  net: number;
  currency: string;
  status: string | null;
  availableAt: Date | null;
  createdAt: Date;
}

/**
 * What settled for one payment, from its ledger entries: `gross` the credits, `fee` every fee
 * charged on them and on lines of their own (Asaas books a payment's fee apart), `net` what the
 * payment left in the balance after refunds and chargebacks, each in minor units. `currency` is
 * the ledger's (Stripe: the balance's, which differs from the payment's after a conversion).
 */
export interface Settlement {
  gross: number;
  fee: number;
  net: number;
  refunded: number;
  chargedBack: number;
  currency: string | null;
  /** When the credit is (or was) available: the latest of its credits. */
  availableAt: Date | null;
  payoutIds: string[];
  entryIds: string[];
}

const sum = (entries: readonly StoredEntry[], pick: (e: StoredEntry) => number) => entries.reduce((total, entry) => total + pick(entry), 0);

export function settlementOf(entries: readonly StoredEntry[]): Settlement {
  const credits = entries.filter((e) => e.kind === 'charge');
  const refunds = entries.filter((e) => e.kind === 'refund');
  const chargebacks = entries.filter((e) => e.kind === 'chargeback' || e.kind === 'chargeback_reversal');
  const feeLines = entries.filter((e) => e.kind === 'fee');
  const available = credits.map((e) => e.availableAt?.getTime()).filter((t): t is number => t !== undefined);
  return {
    gross: sum(credits, (e) => e.amount),
    // A fee line is money out (negative); a fee on an entry is positive when charged.
    fee: sum(entries, (e) => e.fee) - sum(feeLines, (e) => e.amount),
    net: sum(entries, (e) => e.net),
    refunded: -sum(refunds, (e) => e.amount),
    chargedBack: -sum(chargebacks, (e) => e.amount),
    currency: credits[0]?.currency ?? entries[0]?.currency ?? null,
    availableAt: available.length > 0 ? new Date(Math.max(...available)) : null,
    payoutIds: [...new Set(entries.flatMap((e) => (e.payoutId === null ? [] : [e.payoutId])))],
    entryIds: entries.map((e) => e.entryId),
  };
}
