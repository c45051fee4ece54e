import type { EntryEvidence, Finding, PaymentEvidence } from './finding.ts';
import { type Settlement, type StoredEntry, settlementOf } from './settlement.ts';

/** A payment as matching reads it: keyed by its gateway key, never by how its facts are stored. */
export interface PaymentToMatch {
  id: number;
  key: string;
  status: string;
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface PayoutToMatch {
  payoutId: string;
  amount: number;
  currency: string;
  balanceEntryId: string | null;
  entries: StoredEntry[];
}

export interface MatchInput {
  provider: string;
  /** Every payment in scope: created in the window, or named by an entry of it. */
  payments: readonly PaymentToMatch[];
  /** Every entry of those payments (whenever created), and every entry of the window. */
  entries: readonly StoredEntry[];
  payouts: readonly PayoutToMatch[];
  now: Date;
  settlementDays: number;
}

export interface MatchResult {
  findings: Finding[];
  /** Every subject looked at: an open finding about one of them that was not found again is resolved. */
  evaluated: Set<string>;
}

/** Kinds whose entries belong to a payment. */
const paymentKinds = new Set(['charge', 'refund', 'chargeback', 'chargeback_reversal', 'fee']);
/** The statuses of a payment whose money was taken: a credit is expected. */
const settledStatuses = new Set(['paid', 'partially_refunded', 'refunded', 'disputed', 'charged_back']);
const disputedStatuses = new Set(['disputed', 'charged_back']);

export function entryEvidence(entry: StoredEntry): EntryEvidence {
  const { entryId, kind, gatewayType, amount, fee, net, currency, createdAt } = entry;
  return { entryId, kind, gatewayType, amount, fee, net, currency, createdAt: createdAt.toISOString() };
}

function paymentEvidence(payment: PaymentToMatch): PaymentEvidence {
  const { id, key, status, amount, amountRefunded, currency, createdAt } = payment;
  return { paymentId: id, key, status, amount, amountRefunded, currency, createdAt: createdAt.toISOString() };
}

/** The backfill that would fetch the webhook a credit's payment never got: from an hour before the credit. */
function backfillCommand(provider: string, entry: StoredEntry): string {
  return `inboxctl backfill ${provider} --since ${new Date(entry.createdAt.getTime() - 3_600_000).toISOString()}`;
}

/** The entries of each payment, and the credits that belong to none. */
function groupByPayment(input: MatchInput): { byPayment: Map<number, StoredEntry[]>; orphanCredits: StoredEntry[] } {
  const byKey = new Map(input.payments.map((p) => [p.key, p]));
  const byPayment = new Map<number, StoredEntry[]>(input.payments.map((p) => [p.id, []]));
  const orphanCredits: StoredEntry[] = [];
  const seen = new Set<string>();
  for (const entry of input.entries) {
    if (seen.has(entry.entryId) || !paymentKinds.has(entry.kind)) continue;
    seen.add(entry.entryId);
    const payment = (entry.paymentKey !== null ? byKey.get(entry.paymentKey) : undefined) ?? (entry.chargeId !== null ? byKey.get(entry.chargeId) : undefined);
    if (payment) byPayment.get(payment.id)!.push(entry);
    else if (entry.kind === 'charge') orphanCredits.push(entry);
  }
  return { byPayment, orphanCredits };
}

const sameCurrency = (payment: PaymentToMatch, settlement: Settlement) =>
  payment.currency !== null && settlement.currency !== null && payment.currency.toUpperCase() === settlement.currency.toUpperCase();

/** The findings about one payment and its entries. */
function paymentFindings(payment: PaymentToMatch, entries: StoredEntry[], input: MatchInput): Finding[] {
  const settled = settlementOf(entries);
  const credits = entries.filter((e) => e.kind === 'charge');
  const delayMs = input.settlementDays * 86_400_000;
  // The delay runs from when the inbox first saw the payment (created) or last saw it change (updated).
  const pastDelay = (since: Date) => input.now.getTime() - since.getTime() >= delayMs;
  const at = (kind: Finding['kind'], evidence: Finding['evidence']): Finding => ({ kind, subject: payment.key, paymentId: payment.id, evidence });
  const shown = paymentEvidence(payment);
  const related = (kinds: string[]) => entries.filter((e) => kinds.includes(e.kind)).map(entryEvidence);
  const found: Finding[] = [];
  if (credits.length === 0) {
    if (settledStatuses.has(payment.status) && pastDelay(payment.createdAt))
      found.push(at('missing_credit', { kind: 'missing_credit', payment: shown, settlementDays: input.settlementDays }));
    return found;
  }
  const comparable = sameCurrency(payment, settled);
  if (comparable && payment.amount !== null && settled.gross !== payment.amount) {
    found.push(
      at('amount_mismatch', {
        kind: 'amount_mismatch',
        payment: shown,
        ledgerGross: settled.gross,
        ledgerCurrency: settled.currency!,
        entries: related(['charge']),
      }),
    );
  }
  if (comparable && settled.refunded > payment.amountRefunded) {
    found.push(at('refund_not_on_payment', { kind: 'refund_not_on_payment', payment: shown, ledgerRefunded: settled.refunded, entries: related(['refund']) }));
  } else if (comparable && settled.refunded < payment.amountRefunded && pastDelay(payment.updatedAt)) {
    found.push(at('refund_not_in_ledger', { kind: 'refund_not_in_ledger', payment: shown, ledgerRefunded: settled.refunded, entries: related(['refund']) }));
  }
  const chargebacks = related(['chargeback', 'chargeback_reversal']);
  if (settled.chargedBack > 0 && !disputedStatuses.has(payment.status)) {
    found.push(
      at('chargeback_not_on_payment', { kind: 'chargeback_not_on_payment', payment: shown, ledgerChargedBack: settled.chargedBack, entries: chargebacks }),
    );
  } else if (settled.chargedBack <= 0 && payment.status === 'charged_back' && pastDelay(payment.updatedAt)) {
    found.push(
      at('chargeback_not_in_ledger', { kind: 'chargeback_not_in_ledger', payment: shown, ledgerChargedBack: settled.chargedBack, entries: chargebacks }),
    );
  }
  return found;
}

function payoutFinding(payout: PayoutToMatch): Finding | undefined {
  const contents = payout.entries.filter((e) => e.entryId !== payout.balanceEntryId);
  const entriesNet = contents.reduce((total, e) => total + e.net, 0);
  if (entriesNet === payout.amount) return undefined;
  const evidence = {
    kind: 'payout_mismatch' as const,
    payoutId: payout.payoutId,
    payoutAmount: payout.amount,
    currency: payout.currency,
    entriesNet,
    entryCount: contents.length,
  };
  return { kind: 'payout_mismatch', subject: payout.payoutId, paymentId: undefined, evidence };
}

/**
 * Every discrepancy between the payments, the ledger entries and the payouts given: pure, so each
 * rule is tested from values. Amounts are compared only in the same currency (a Stripe balance in
 * another currency than the charge holds the converted amount: nothing to compare it with here).
 */
export function matchLedger(input: MatchInput): MatchResult {
  const { byPayment, orphanCredits } = groupByPayment(input);
  const findings: Finding[] = [];
  const evaluated = new Set<string>();
  for (const payment of input.payments) {
    evaluated.add(payment.key);
    findings.push(...paymentFindings(payment, byPayment.get(payment.id)!, input));
  }
  for (const entry of input.entries) evaluated.add(entry.entryId);
  for (const entry of orphanCredits) {
    const evidence = {
      kind: 'credit_without_payment' as const,
      entry: entryEvidence(entry),
      chargeId: entry.chargeId,
      paymentKey: entry.paymentKey,
      backfillCommand: backfillCommand(input.provider, entry),
    };
    findings.push({ kind: 'credit_without_payment', subject: entry.entryId, paymentId: undefined, evidence });
  }
  for (const payout of input.payouts) {
    evaluated.add(payout.payoutId);
    const finding = payoutFinding(payout);
    if (finding) findings.push(finding);
  }
  return { findings, evaluated };
}
