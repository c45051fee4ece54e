import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';
import { type PaymentStatus, type SplitShare, paymentStatuses } from './payment-fact.ts';

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
    // Whose money it is when one provider receives for many accounts (a Stripe Connect connected
    // account): the account of the events that made it, null for a direct integration. Not part
    // of the key: the gateways' charge ids are unique across their accounts (docs/accounts.md).
    account: varchar('account', { length: 150 }),
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
    // How the charge is divided between recipients (Pagar.me split rules; SplitShare[]), part of the
    // folded state: null when no fact said one (docs/accounts.md).
    split: jsonb('split').$type<readonly SplitShare[]>(),
    // `require` mode: the status the application created the row with, recorded the first time an
    // event changes the row. Every later fold starts from it (see fold.ts); null until then, and
    // always null for rows the inbox created (`create` mode folds from nothing).
    initialStatus: varchar('initial_status', { length: 20 }).$type<PaymentStatus>(),
    // The sequence number of this payment's last outbound event (payment_events): the next one is
    // this + 1, assigned under the row lock, so a payment's events are numbered 1, 2, 3 without gaps.
    eventSequence: integer('event_sequence').notNull().default(0),
    // The payment's folded state (the whole PaymentState, checkpoint.ts encodes it) when its facts
    // were pruned (fact-retention): later folds start from it instead of from nothing. Null while
    // every fact of the payment is kept.
    checkpoint: jsonb('checkpoint'),
    checkpointedAt: timestamp('checkpointed_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('payments_provider_gateway_charge_id_key').on(table.provider, table.gatewayChargeId),
    index('payments_account_idx').on(table.account).where(sql`${table.account} is not null`),
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
  (table) => [index('payment_transitions_payment_id_idx').on(table.paymentId, table.id), index('payment_transitions_inbox_id_idx').on(table.inboxId)],
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
 * transaction's id (raised to the payment's previous event's, sql/payment-events.ts says why), the
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
    /** The payment's account (payments.account) at this change: the feed and destinations filter by it. */
    account: varchar('account', { length: 150 }),
    status: varchar('status', { length: 20 }).$type<PaymentStatus>().notNull(),
    previousStatus: varchar('previous_status', { length: 20 }).$type<PaymentStatus>(),
    amount: bigint('amount', { mode: 'number' }),
    amountRefunded: bigint('amount_refunded', { mode: 'number' }).notNull(),
    currency: varchar('currency', { length: 3 }),
    inquiryOpen: boolean('inquiry_open').notNull().default(false),
    // The payment's split at this change (SplitShare[]), null when it has none.
    split: jsonb('split').$type<readonly SplitShare[]>(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
    causeInboxId: bigint('cause_inbox_id', { mode: 'number' }).notNull(),
    causeEventId: varchar('cause_event_id', { length: 150 }).notNull(),
    causeEventType: varchar('cause_event_type', { length: 80 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('payment_events_payment_id_sequence_key').on(table.paymentId, table.sequence),
    index('payment_events_txid_position_idx').on(table.txid, table.position),
    // The feed filtered by account: its (txid, position) order within one account.
    index('payment_events_account_txid_position_idx').on(table.account, table.txid, table.position).where(sql`${table.account} is not null`),
  ],
);

export type PaymentEventRow = typeof paymentEvents.$inferSelect;

/**
 * A payment's history: what each settled event meant for its payment (its fact: what the payload
 * said, or the gateway snapshot its refetch read, which no payload can give back), one row per
 * event, kept for the payment's life instead of its payload's (docs/payment-history.md). The fold
 * reads a charge's facts here (known-facts.ts in src/processing); retention, `purge` and `restore` of inbox
 * rows leave them alone, and only fact retention deletes them, once the payment has been quiet
 * for its provider's keyRetentionDays.
 *
 * Keyed by the payment's gateway key (provider, payment_key), not by payments.id: a fact exists
 * before any payment row does (an event refused for its amounts creates none, yet the next event
 * of the charge folds with it), and the fold looks facts up by the keys its events carry, legacy
 * keys included. One row per event (provider, event_id): a replay that gives the event a new
 * meaning (a new snapshot) replaces it; a restored or resent event adds nothing.
 *
 * Written by the trigger webhook_inbox_records_payment_facts (drizzle/0018_payment_facts.sql) in
 * the transaction that settles the inbox row with its fact, whichever version of the service
 * settles it: during a rolling deploy, an old instance's facts land here too.
 */
export const paymentFacts = pgTable(
  'payment_facts',
  {
    provider: varchar('provider', { length: 30 }).notNull(),
    eventId: varchar('event_id', { length: 150 }).notNull(),
    /** The inbox row it was settled on (the fold breaks exact ties by it); the row itself may be gone. */
    inboxId: bigint('inbox_id', { mode: 'number' }).notNull(),
    eventType: varchar('event_type', { length: 80 }).notNull(),
    /** The fact's chargeId: the payment's key at its gateway. */
    paymentKey: varchar('payment_key', { length: 150 }).notNull(),
    /** The fact's legacyChargeId: the key the payment may still be stored under. */
    legacyKey: varchar('legacy_key', { length: 150 }),
    /** The event's account (webhook_inbox.account): null for a direct integration. */
    account: varchar('account', { length: 150 }),
    /** The event's occurred_at (the fact's own time, for a snapshot the read's, is in `fact`). */
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** StoredFact (stored-fact.ts), as webhook_inbox.fact holds it. */
    fact: jsonb('fact').notNull(),
    /** Why processing left the event as it did (webhook_inbox.decision, decision_detail). */
    decision: text('decision'),
    decisionDetail: jsonb('decision_detail'),
    /** When the fact was last written: a payment is quiet when its newest is older than keyRetentionDays. */
    recordedAt: timestamp('recorded_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'payment_facts_pkey', columns: [table.provider, table.eventId] }),
    // The fold's read: every fact of a batch's charges.
    index('payment_facts_provider_payment_key_idx').on(table.provider, table.paymentKey),
    // Fact retention: a payment whose facts sit under its legacy key is one payment with them.
    index('payment_facts_provider_legacy_key_idx').on(table.provider, table.legacyKey).where(sql`${table.legacyKey} is not null`),
    // Fact retention: the facts old enough to go, oldest first.
    index('payment_facts_provider_recorded_at_idx').on(table.provider, table.recordedAt),
  ],
);

export type PaymentFactRow = typeof paymentFacts.$inferSelect;

/**
 * How far the one-time carry-over of facts recorded before payment_facts existed has got (one
 * row). Rows of webhook_inbox with ids in (carried_through_inbox_id, target_inbox_id] are not
 * carried yet: the fold still reads their facts there, and retention leaves them alone, until the
 * carry-over (src/processing/fact-carry-over.ts) has passed them. Rows after target_inbox_id were
 * stored after the trigger existed.
 */
export const paymentFactsCarryOver = pgTable(
  'payment_facts_carry_over',
  {
    id: smallint('id').primaryKey().default(1),
    targetInboxId: bigint('target_inbox_id', { mode: 'number' }).notNull(),
    carriedThroughInboxId: bigint('carried_through_inbox_id', { mode: 'number' }).notNull().default(0),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [check('payment_facts_carry_over_one_row', sql`${table.id} = 1`)],
);
