import { type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Transaction } from '../../../db/client.ts';
import type { PaymentState } from '../fold.ts';
import type { PaymentStatus } from '../payment-fact.ts';
import { type PaymentRow, paymentTransitions, payments } from '../schema.ts';

/** A payment's natural key: the gateway (configured provider name) and its charge id. */
export interface ChargeKey {
  provider: string;
  chargeId: string;
}

// Many keys bind as ONE JSON parameter (as pg-boss binds its jobs): the statement text and its
// plan stay the same whatever the batch size, and nothing is expanded per key on the client.
const chargeKeysJson = (keys: readonly ChargeKey[]) => JSON.stringify(keys.map((k) => ({ provider: k.provider, charge_id: k.chargeId })));

/**
 * The payment rows of these charges, locked until the transaction ends, so folds of one charge
 * never interleave. Locked in id order: two transactions with overlapping charges wait on each
 * other instead of deadlocking.
 *
 * Found through the (provider, gateway_charge_id) unique index: `= any(array(…))` on both columns
 * is an index condition whatever the planner guesses of the JSON's size (a bare `in (select … from
 * jsonb_to_recordset)` was a hash join over a sequential scan of every payment, per batch); the
 * pair is then matched exactly.
 */
export async function lockPayments(tx: Transaction, keys: readonly ChargeKey[]): Promise<PaymentRow[]> {
  if (keys.length === 0) return [];
  return tx
    .select()
    .from(payments)
    .where(chargeKeysMatch(payments.provider, payments.gatewayChargeId, keys))
    .orderBy(payments.id)
    .for('update');
}

/**
 * `(provider, key) in keys` as an index condition on a (provider, key) index whatever the batch
 * size: see lockPayments. Shared by every table the fold reads by charge.
 */
export function chargeKeysMatch(providerColumn: AnyPgColumn, keyColumn: AnyPgColumn, keys: readonly ChargeKey[]): SQL {
  const json = chargeKeysJson(keys);
  return sql`${providerColumn} = any(array(select distinct k->>'provider' from jsonb_array_elements(${json}::jsonb) as k))
    and ${keyColumn} = any(array(select k->>'charge_id' from jsonb_array_elements(${json}::jsonb) as k))
    and (${providerColumn}, ${keyColumn}) in (
      select k.provider, k.charge_id from jsonb_to_recordset(${json}::jsonb) as k(provider text, charge_id text))`;
}

export interface NewPayment extends ChargeKey {
  account: string | null;
  state: PaymentState;
}

/**
 * `create` mode: the rows inserted by this transaction; a charge missing from the answer already
 * existed. The unique index decides; a concurrent inserter of the same charge waits on it until
 * this transaction ends, then finds the row with lockPayments. Inserted in key order, so two
 * batches inserting overlapping charges queue behind each other instead of deadlocking.
 */
export async function insertPaymentsIfAbsent(tx: Transaction, rows: readonly NewPayment[]): Promise<PaymentRow[]> {
  if (rows.length === 0) return [];
  const sorted = [...rows].sort((a, b) => compareKeys(a, b));
  return tx
    .insert(payments)
    .values(sorted.map(({ provider, chargeId, account, state }) => ({ provider, gatewayChargeId: chargeId, account, ...state })))
    .onConflictDoNothing({ target: [payments.provider, payments.gatewayChargeId] })
    .returning();
}

export interface PaymentUpdate {
  id: number;
  state: PaymentState;
  initialStatus: PaymentStatus | null;
  /** Outbound events (payment_events) this transaction writes for it: event_sequence moves on by as many. */
  events: number;
  /** The account its events name: set on a payment that has none yet (made before its events named one), never changed once set. */
  account: string | null;
}

/**
 * The folded states of several payments and their event_sequence, one statement (rows already
 * locked by this transaction, found by primary key: `= any(array(…))` is an index condition).
 */
export async function updatePaymentStates(tx: Transaction, updates: readonly PaymentUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  const values = JSON.stringify(
    updates.map(({ id, state, initialStatus, events, account }) => ({
      id,
      events,
      account,
      status: state.status,
      amount: state.amount,
      amount_refunded: state.amountRefunded,
      currency: state.currency,
      last_gateway_event_at: state.lastGatewayEventAt?.toISOString() ?? null,
      inquiry_open: state.inquiryOpen,
      status_before_dispute: state.statusBeforeDispute,
      split: state.split,
      initial_status: initialStatus,
    })),
  );
  await tx.execute(sql`
    update ${payments} as p set
      status = v.status, amount = v.amount, amount_refunded = v.amount_refunded, currency = v.currency,
      last_gateway_event_at = v.last_gateway_event_at, inquiry_open = v.inquiry_open,
      status_before_dispute = v.status_before_dispute, split = v.split, initial_status = v.initial_status,
      event_sequence = p.event_sequence + v.events, account = coalesce(p.account, v.account), updated_at = now()
    from jsonb_to_recordset(${values}::jsonb) as v(
      id bigint, events int, account varchar, status varchar, amount bigint, amount_refunded bigint, currency varchar,
      last_gateway_event_at timestamptz, inquiry_open boolean, status_before_dispute varchar, split jsonb, initial_status varchar)
    where p.id = v.id and p.id = any(array(select (u->>'id')::bigint from jsonb_array_elements(${values}::jsonb) as u))`);
}

export interface PaymentTransition {
  paymentId: number;
  inboxId: number;
  fromStatus: PaymentStatus | null;
  toStatus: PaymentStatus;
}

export async function insertPaymentTransitions(tx: Transaction, transitions: readonly PaymentTransition[]): Promise<void> {
  if (transitions.length === 0) return;
  await tx.insert(paymentTransitions).values([...transitions]);
}

export const chargeKeyOf = (key: ChargeKey) => `${key.provider}\u0000${key.chargeId}`;

function compareKeys(a: ChargeKey, b: ChargeKey): number {
  return a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : a.chargeId < b.chargeId ? -1 : a.chargeId > b.chargeId ? 1 : 0;
}

/** A payment's folded state kept as its checkpoint (checkpoint.ts), its facts about to be pruned. */
export interface PaymentCheckpoint {
  id: number;
  /** encodeCheckpoint's JSON text. */
  checkpoint: string;
}

/** The checkpoints of several payments (rows already locked by this transaction), one statement. */
export async function writeCheckpoints(tx: Transaction, checkpoints: readonly PaymentCheckpoint[]): Promise<void> {
  if (checkpoints.length === 0) return;
  // Each checkpoint travels as text and is cast in SQL: parsing it here only to serialize it again
  // would cost a parse per payment for nothing.
  const values = JSON.stringify(checkpoints);
  await tx.execute(sql`
    update ${payments} as p set checkpoint = v.checkpoint::jsonb, checkpointed_at = now()
    from jsonb_to_recordset(${values}::jsonb) as v(id bigint, checkpoint text)
    where p.id = v.id and p.id = any(array(select (u->>'id')::bigint from jsonb_array_elements(${values}::jsonb) as u))`);
}
