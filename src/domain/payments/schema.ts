import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, customType, index, integer, pgTable, timestamp, uniqueIndex, uuid, varchar } from 'drizzle-orm/pg-core';
import { type PaymentStatus, paymentStatuses } from './payment-fact.ts';

// Written from the one list of statuses: a new status changes this check, and drizzle-kit then
// generates the migration that replaces the constraint.
const statusCheck = (column: unknown) => sql`${column} in (${sql.raw(paymentStatuses.map((status) => `'${status}'`).join(', '))})`;

/**
 * The reference domain the inbox feeds: one row per gateway charge, in the canonical status set
 * shared by every gateway (see state-machine.ts).
 */
export const payments = pgTable(
  'payments',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: varchar('provider', { length: 30 }).notNull(),
    gatewayChargeId: varchar('gateway_charge_id', { length: 150 }).notNull(),
    status: varchar('status', { length: 20 }).$type<PaymentStatus>().notNull(),
    // The currency's ISO 4217 minor units (docs/amounts.md): decimals and Stripe's own scale are converted by the driver.
    amount: bigint('amount', { mode: 'number' }),
    amountRefunded: bigint('amount_refunded', { mode: 'number' }).notNull().default(0),
    currency: varchar('currency', { length: 3 }),
    lastGatewayEventAt: timestamp('last_gateway_event_at', { withTimezone: true, mode: 'date' }),
    // An inquiry is open: the payer's bank asked about the charge, no money moved (docs/disputes.md).
    inquiryOpen: boolean('inquiry_open').notNull().default(false),
    // While disputed, what a won dispute returns to (paid, partially_refunded, refunded): part of
    // the folded state, so a fold resumed from this row ends a dispute as one over every fact would.
    statusBeforeDispute: varchar('status_before_dispute', { length: 20 }).$type<PaymentStatus>(),
    // `require` mode: the status the application created the row with, recorded the first time an
    // event changes the row. Every later fold starts from it (see fold.ts); null until then, and
    // always null for rows the inbox created (`create` mode folds from nothing).
    initialStatus: varchar('initial_status', { length: 20 }).$type<PaymentStatus>(),
    // The sequence number of this payment's last outbound event (payment_events): the next one is
    // this + 1, assigned under the row lock, so a payment's events are numbered 1, 2, 3 without gaps.
    eventSequence: integer('event_sequence').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('payments_provider_gateway_charge_id_key').on(table.provider, table.gatewayChargeId),
    check('payments_status_check', statusCheck(table.status)),
    check('payments_initial_status_check', sql`${table.initialStatus} is null or ${statusCheck(table.initialStatus)}`),
    check('payments_status_before_dispute_check', sql`${table.statusBeforeDispute} is null or ${statusCheck(table.statusBeforeDispute)}`),
    // No money movement refunds more than was charged: the fold refuses such a fact (fold.ts), and
    // the row can never hold one.
    check('payments_amount_refunded_check', sql`${table.amountRefunded} >= 0 and (${table.amount} is null or ${table.amountRefunded} <= ${table.amount})`),
  ],
);

export type PaymentRow = typeof payments.$inferSelect;

/**
 * The status history: one row each time processing an event changed a payment's status (from
 * null when the event created the payment). inbox_id is indexed but deliberately NOT unique: an
 * event that took effect twice would show up as two rows instead of being hidden by a constraint.
 * No foreign key to webhook_inbox: retention purges old inbox rows, the history stays.
 */
export const paymentTransitions = pgTable(
  'payment_transitions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    paymentId: bigint('payment_id', { mode: 'number' })
      .notNull()
      .references(() => payments.id, { onDelete: 'cascade' }),
    inboxId: bigint('inbox_id', { mode: 'number' }).notNull(),
    fromStatus: varchar('from_status', { length: 20 }).$type<PaymentStatus>(),
    toStatus: varchar('to_status', { length: 20 }).$type<PaymentStatus>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    index('payment_transitions_payment_id_idx').on(table.paymentId, table.id),
    index('payment_transitions_inbox_id_idx').on(table.inboxId),
  ],
);

/** PostgreSQL's 64-bit transaction id: what the feed's cursor orders commits by (see payment-events-feed). */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * The transactional outbox: one row each time a payment's status, amounts or open inquiry change, written in the
 * same transaction as the payment row (and its payment_transitions entry when the status moved),
 * and never changed afterwards.
 * It is what the application is told (pushed to destinations, or read from the feed), so it keeps
 * the state as it was at that change instead of pointing at rows that move on or are purged.
 * `sequence` counts per payment from 1 without gaps (payments.event_sequence); `txid` is the writing
 * transaction's id (raised to the payment's previous event's, payment-events-sql.ts says why), the
 * feed's gap-free cursor together with `position`.
 */
export const paymentEvents = pgTable(
  'payment_events',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    position: bigserial('position', { mode: 'number' }).notNull(),
    txid: xid8('txid').notNull().default(sql`pg_current_xact_id()`),
    paymentId: bigint('payment_id', { mode: 'number' })
      .notNull()
      .references(() => payments.id, { onDelete: 'cascade' }),
    sequence: integer('sequence').notNull(),
    provider: varchar('provider', { length: 30 }).notNull(),
    gatewayChargeId: varchar('gateway_charge_id', { length: 150 }).notNull(),
    status: varchar('status', { length: 20 }).$type<PaymentStatus>().notNull(),
    previousStatus: varchar('previous_status', { length: 20 }).$type<PaymentStatus>(),
    amount: bigint('amount', { mode: 'number' }),
    amountRefunded: bigint('amount_refunded', { mode: 'number' }).notNull(),
    currency: varchar('currency', { length: 3 }),
    inquiryOpen: boolean('inquiry_open').notNull().default(false),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
    causeInboxId: bigint('cause_inbox_id', { mode: 'number' }).notNull(),
    causeEventId: varchar('cause_event_id', { length: 150 }).notNull(),
    causeEventType: varchar('cause_event_type', { length: 80 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('payment_events_payment_id_sequence_key').on(table.paymentId, table.sequence),
    index('payment_events_txid_position_idx').on(table.txid, table.position),
  ],
);

export type PaymentEventRow = typeof paymentEvents.$inferSelect;
