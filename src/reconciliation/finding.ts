/**
 * What reconciliation can find, each a typed record with the evidence it was decided on: the
 * payment's fields and the ledger entries, as they were. Shown by ./finding-text.ts.
 */
export const findingKinds = [
  // The payment is paid, and past the gateway's settlement delay the ledger holds no credit for it.
  'missing_credit',
  // The ledger credited a charge the inbox has no payment for: a webhook that never came.
  'credit_without_payment',
  // The credit's gross differs from the payment's amount (same currency).
  'amount_mismatch',
  // The ledger refunded more than the payment says, or the payment says more was refunded than the ledger shows.
  'refund_not_on_payment',
  'refund_not_in_ledger',
  // The ledger took a chargeback the payment does not show, or the payment is charged back with no chargeback in the ledger.
  'chargeback_not_on_payment',
  'chargeback_not_in_ledger',
  // A payout's entries do not add up to its amount.
  'payout_mismatch',
  // A ledger entry the reader could not read: never a crash, never left out in silence.
  'unreadable_entry',
] as const;
export type FindingKind = (typeof findingKinds)[number];

export const runStatuses = ['running', 'complete', 'partial'] as const;
export type RunStatus = (typeof runStatuses)[number];

/** The payment as the inbox holds it, as the finding saw it. */
export interface PaymentEvidence {
  paymentId: number;
  key: string;
  status: string;
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  createdAt: string;
}

/** A ledger entry as the finding saw it (the whole row is in ledger_entries). */
export interface EntryEvidence {
  entryId: string;
  kind: string;
  gatewayType: string;
  amount: number;
  fee: number;
  net: number;
  currency: string;
  createdAt: string;
}

export type FindingEvidence =
  | {
      kind: 'missing_credit';
      payment: PaymentEvidence;
      settlementDays: number;
      /** What the gateway's payment object says of its settlement, where it has one (Asaas). */
      gatewaySays?: { netAmount: number | null; expectedCreditAt: string | null; creditedAt: string | null };
    }
  | { kind: 'credit_without_payment'; entry: EntryEvidence; chargeId: string | null; paymentKey: string | null; backfillCommand: string }
  | { kind: 'amount_mismatch'; payment: PaymentEvidence; ledgerGross: number; ledgerCurrency: string; entries: EntryEvidence[] }
  | { kind: 'refund_not_on_payment' | 'refund_not_in_ledger'; payment: PaymentEvidence; ledgerRefunded: number; entries: EntryEvidence[] }
  | { kind: 'chargeback_not_on_payment' | 'chargeback_not_in_ledger'; payment: PaymentEvidence; ledgerChargedBack: number; entries: EntryEvidence[] }
  | { kind: 'payout_mismatch'; payoutId: string; payoutAmount: number; currency: string; entriesNet: number; entryCount: number }
  | { kind: 'unreadable_entry'; entryId: string | null; reason: string; excerpt: string };

export interface Finding {
  kind: FindingKind;
  /** What it is about: the payment key, the ledger entry id or the payout id. */
  subject: string;
  paymentId: number | undefined;
  evidence: FindingEvidence;
}
