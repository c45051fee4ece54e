import type { SplitShare } from '../../domain/payments/payment-fact.ts';
import { integerMinorUnits } from '../shared/amounts.ts';

/**
 * Pagar.me v5 split rules: how a charge is divided between recipients ("recebedores"). A rule is
 * sent on the order's payment (or the capture) as `{ amount, type: "flat" | "percentage",
 * recipient_id, options: { liable, charge_processing_fee, charge_remainder_fee } }` (docs.pagar.me
 * "Split"; pagarme-nodejs-sdk CreateSplitRequest), and comes back on the charge's
 * `last_transaction.split` (the SDK's GetTransactionResponse also names a `splits` list) as
 * `{ id: "sr_…", type, amount, recipient: { id: "rp_…", … }, options, gateway_id }`
 * (GetSplitResponse; docs.pagar.me's split example). `amount` is integer centavos for `flat`, a
 * percentage for `percentage`. Pagar.me's own published example writes one amount as a string
 * ("10000"), and the SDK types `charge_remainder_fee` of an answer as a string: both are read.
 *
 * What this reads is the charge's split as the last transaction carries it. A cancellation can
 * carry a split of its own (CreateCancelChargeRequest `split` / `split_rules`: how the refund is
 * divided), so the callers take it only from a charge that nothing was taken back from yet
 * (UNVERIFIED: whether a refund's last_transaction carries the refund's split or the charge's).
 */

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** true / false, as a JSON boolean or the text of one; null when the rule does not say. */
function flag(value: unknown): boolean | null {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return null;
}

function percentage(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n >= 0 && n <= 100 ? n : undefined;
}

/** One rule, or undefined when it cannot be read (no recipient, an unknown type, an amount that is no number). */
function shareOf(value: unknown): SplitShare | undefined {
  const rule = record(value);
  if (!rule) return undefined;
  const recipientId = text(record(rule.recipient)?.id) ?? text(rule.recipient_id);
  if (!recipientId) return undefined;
  const options = record(rule.options) ?? {};
  const flags = {
    liable: flag(options.liable),
    chargeProcessingFee: flag(options.charge_processing_fee),
    chargeRemainderFee: flag(options.charge_remainder_fee),
  };
  const ruleId = text(rule.id) ?? null;
  if (rule.type === 'flat') {
    const amount = integerMinorUnits(rule.amount);
    return amount === undefined || amount < 0 ? undefined : { recipientId, ruleId, amount, percentage: null, ...flags };
  }
  if (rule.type === 'percentage') {
    const share = percentage(rule.amount);
    return share === undefined ? undefined : { recipientId, ruleId, amount: null, percentage: share, ...flags };
  }
  return undefined;
}

/**
 * The split a v5 charge's last transaction carries; undefined when it has none, or one this cannot
 * read whole (a split read in part would misstate whose money the charge is: it is then not said).
 */
export function pagarmeChargeSplit(charge: Record<string, unknown>): SplitShare[] | undefined {
  const transaction = record(charge.last_transaction);
  const rules = transaction?.split ?? transaction?.splits;
  if (!Array.isArray(rules) || rules.length === 0) return undefined;
  const shares = rules.map(shareOf);
  return shares.every((share) => share !== undefined) ? shares : undefined;
}
