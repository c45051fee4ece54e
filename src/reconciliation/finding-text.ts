import type { EntryEvidence, FindingEvidence, PaymentEvidence } from './finding.ts';

/** Minor units as the gateway counts them, with the currency beside: 1999 usd, never 19.99. */
const money = (amount: number | null, currency: string | null) => `${amount === null ? '?' : amount} ${currency ?? ''}`.trim();

const entryList = (entries: readonly EntryEvidence[]) =>
  entries.length === 0 ? 'no entry' : entries.map((e) => `${e.entryId} (${e.gatewayType} ${e.amount})`).join(', ');

const paymentSays = (p: PaymentEvidence) => `payment ${p.key} (#${p.paymentId}) is ${p.status}, ${money(p.amount, p.currency)}`;

/** What the gateway's payment object said, when it was read. */
function gatewaySaysText(says: { netAmount: number | null; expectedCreditAt: string | null; creditedAt: string | null } | undefined): string {
  if (!says) return '';
  const net = says.netAmount === null ? '' : ` to net ${says.netAmount}`;
  if (says.creditedAt !== null) return `, though the gateway's payment says it was credited${net} on ${says.creditedAt}`;
  return says.expectedCreditAt === null
    ? `; the gateway's payment names no credit date${net ? ` (it is${net})` : ''}`
    : `, and the gateway's payment expected it${net} on ${says.expectedCreditAt}`;
}

/**
 * One line saying what reconciliation found and what to do about it (`inboxctl reconcile`, the
 * dashboard's findings page, the payment page), from a finding's evidence, as describeDecision
 * says why an event ended as it did. Amounts are in minor units, as stored.
 */
export function describeFinding(evidence: FindingEvidence): string {
  switch (evidence.kind) {
    case 'missing_credit':
      return `missing_credit: ${paymentSays(evidence.payment)}, first seen ${evidence.payment.createdAt}; the ledger holds no credit for it after ${evidence.settlementDays} days${gatewaySaysText(evidence.gatewaySays)}: check the charge at the gateway (captured? settled to another account?)`;
    case 'credit_without_payment':
      return `credit_without_payment: ledger entry ${evidence.entry.entryId} (${evidence.entry.gatewayType}, ${money(evidence.entry.amount, evidence.entry.currency)}, ${evidence.entry.createdAt}) credits ${evidence.paymentKey ?? evidence.chargeId ?? 'a charge it does not name'}, which the inbox has no payment for: a webhook that never came. Fetch it with \`${evidence.backfillCommand}\``;
    case 'amount_mismatch':
      return `amount_mismatch: ${paymentSays(evidence.payment)}; the ledger credited ${money(evidence.ledgerGross, evidence.ledgerCurrency)} (${entryList(evidence.entries)})`;
    case 'refund_not_on_payment':
      return `refund_not_on_payment: the ledger refunded ${evidence.ledgerRefunded} (${entryList(evidence.entries)}); ${paymentSays(evidence.payment)} with ${evidence.payment.amountRefunded} refunded: a refund webhook is missing (backfill, or refetch the charge)`;
    case 'refund_not_in_ledger':
      return `refund_not_in_ledger: ${paymentSays(evidence.payment)} with ${evidence.payment.amountRefunded} refunded; the ledger shows ${evidence.ledgerRefunded} (${entryList(evidence.entries)}): did the refund fail at the gateway?`;
    case 'chargeback_not_on_payment':
      return `chargeback_not_on_payment: the ledger took a chargeback of ${evidence.ledgerChargedBack} (${entryList(evidence.entries)}); ${paymentSays(evidence.payment)}: a dispute webhook is missing`;
    case 'chargeback_not_in_ledger':
      return `chargeback_not_in_ledger: ${paymentSays(evidence.payment)}; the ledger shows no chargeback (${entryList(evidence.entries)}): was the dispute won, or is it in another account?`;
    case 'payout_mismatch':
      return `payout_mismatch: payout ${evidence.payoutId} paid ${money(evidence.payoutAmount, evidence.currency)}; its ${evidence.entryCount} entries add up to ${evidence.entriesNet} (a difference of ${evidence.payoutAmount - evidence.entriesNet})`;
    case 'unreadable_entry':
      return `unreadable_entry: ${evidence.entryId === null ? 'an entry with no id' : `entry ${evidence.entryId}`} could not be read (${evidence.reason}); it is not in the ledger table and counts for nothing until it can be: ${evidence.excerpt}`;
  }
}
