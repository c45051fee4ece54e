import type { SplitShare } from '../../domain/payments/payment-fact.ts';
import { integerMinorUnits } from '../shared/amounts.ts';
import { readPath } from '../shared/json-body.ts';

/**
 * The split rules a v4 postback carries on its transaction, form-encoded like the rest of it
 * (`transaction[split_rules][0][recipient_id]=re_…&…[percentage]=100&…[amount]=&…[liable]=true&
 * …[charge_processing_fee]=true&…[charge_remainder]=true&…[id]=sr_…`, the postback example of
 * docs.pagar.me "Gerenciando postbacks" as integrators copied it; the v4 split_rule object). Each
 * rule has either `percentage` or `amount` (integer centavos), the other empty. v4 answers name
 * the remainder flag `charge_remainder` (its requests `charge_remainder_fee`): both are read.
 * A transaction with no split sends `transaction[split_rules]=` (empty): nothing to read.
 * These are the transaction's rules: a v4 refund's own split rules belong to the refund, not here.
 */

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function flag(value: unknown): boolean | null {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return null;
}

function percentage(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n >= 0 && n <= 100 ? n : undefined;
}

function shareOf(value: unknown): SplitShare | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const rule = value as Record<string, unknown>;
  const recipientId = text(rule.recipient_id);
  if (!recipientId) return undefined;
  const amount = text(rule.amount) === undefined && typeof rule.amount !== 'number' ? undefined : integerMinorUnits(rule.amount);
  const share = text(rule.percentage) === undefined && typeof rule.percentage !== 'number' ? undefined : percentage(rule.percentage);
  // Exactly one of the two: a rule with both, or with neither readable, says no share this can state.
  if ((amount === undefined) === (share === undefined) || (amount !== undefined && amount < 0)) return undefined;
  return {
    recipientId,
    ruleId: text(rule.id) ?? null,
    amount: amount ?? null,
    percentage: share ?? null,
    liable: flag(rule.liable),
    chargeProcessingFee: flag(rule.charge_processing_fee),
    chargeRemainderFee: flag(rule.charge_remainder ?? rule.charge_remainder_fee),
  };
}

/** The transaction's split; undefined when it has none, or one this cannot read whole. */
export function pagarmeLegacySplit(body: Record<string, unknown>): SplitShare[] | undefined {
  const rules = readPath(body, 'transaction.split_rules');
  if (!Array.isArray(rules) || rules.length === 0) return undefined;
  const shares = rules.map(shareOf);
  return shares.every((share) => share !== undefined) ? shares : undefined;
}
