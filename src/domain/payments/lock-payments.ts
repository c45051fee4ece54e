import type { Transaction } from '../../db/client.ts';
import { type ChargeGroup, type ChargeGroups, keysOf } from './charge-groups.ts';
import { PaymentNotYetKnown } from './errors.ts';
import { applyFact, canApply } from './fold.ts';
import { type ChargeKey, chargeKeyOf, insertPaymentsIfAbsent, lockPayments } from './sql/payments.ts';
import type { PaymentRow } from './schema.ts';

/** A charge's payment row, locked by this transaction until it ends. */
export interface LockedPayment {
  row: PaymentRow;
  /** Inserted by this transaction, from its first event's fact alone. */
  created: boolean;
}

/** The locked payment of each charge of the batch (by chargeKeyOf); a charge none could be created for has none. */
export type LockedPayments = Map<string, LockedPayment>;

/**
 * Lock first: most events find their payment already there, under its key or, stored before the
 * key changed, under a legacy key (such a row keeps its key: its outbound events go on under the
 * charge_id and sequence the application already knows). In `create` mode the missing rows are
 * inserted; a charge whose insert lost the race to a concurrent first event waited on the unique
 * index until the winner committed, and its row is then locked like the others. In `require` mode
 * a missing row fails the batch (PaymentNotYetKnown): the application has not created it yet.
 */
export async function lockOrCreatePayments(tx: Transaction, charges: ChargeGroups): Promise<LockedPayments> {
  const locked: LockedPayments = new Map();
  await lockInto(tx, charges, keysOf(charges), locked);
  const missing = [...charges.byCharge.entries()].filter(([id]) => !locked.has(id)).map(([, group]) => group);
  const required = missing.find((group) => group.events.some(({ event }) => event.unknownPayment === 'require'));
  if (required) throw new PaymentNotYetKnown(required.key.provider, required.key.chargeId);
  const creatable = creatablePayments(missing);
  const inserted = await insertPaymentsIfAbsent(
    tx,
    creatable.map(({ group, state }) => ({ ...group.key, account: group.account, state })),
  );
  for (const row of inserted) locked.set(chargeKeyOf({ provider: row.provider, chargeId: row.gatewayChargeId }), { row, created: true });
  const raced = creatable.map(({ group }) => group).filter((group) => !locked.has(chargeKeyOf(group.key)));
  if (raced.length > 0)
    await lockInto(
      tx,
      charges,
      raced.map((group) => group.key),
      locked,
    );
  for (const group of raced) {
    if (!locked.has(chargeKeyOf(group.key))) throw new Error(`payment ${group.key.provider}/${group.key.chargeId} conflicted on insert but cannot be read`);
  }
  return locked;
}

/** Locks the rows of `keys` and files each under the charge that owns it: the key's own row first, a legacy one only when the key has none. */
async function lockInto(tx: Transaction, charges: ChargeGroups, keys: ChargeKey[], locked: LockedPayments): Promise<void> {
  const rows = new Map((await lockPayments(tx, keys)).map((row) => [chargeKeyOf({ provider: row.provider, chargeId: row.gatewayChargeId }), row]));
  for (const [id, row] of rows) if (charges.owners.get(id)?.owner === id) locked.set(id, { row, created: false });
  for (const [id, row] of rows) {
    const owner = charges.owners.get(id)?.owner;
    if (owner !== undefined && !locked.has(owner)) locked.set(owner, { row, created: false });
  }
}

/**
 * A payment is created by the first of its events that alone makes a possible one; a charge with
 * none (each would refund more than its amount) gets no row, and its events are refused.
 */
function creatablePayments(missing: readonly ChargeGroup[]) {
  return missing.flatMap((group) => {
    const first = group.events.find(({ event }) => canApply(null, event.fact));
    return first ? [{ group, state: applyFact(null, first.event.fact) }] : [];
  });
}
