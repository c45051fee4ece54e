import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, pgTable, primaryKey, smallint, text, timestamp, varchar } from 'drizzle-orm/pg-core';
import { payments } from '../domain/payments/schema.ts';

/**
 * One lane per (destination, payment): how far that payment's events (payment_events.sequence)
 * have been answered 2xx by that destination. The head event (delivered_sequence + 1) is sent
 * until it succeeds; the ones after it wait, so the application sees each payment's events in
 * order. `attempts` counts the head event's failures since its last success; at the destination's
 * maxAttempts the lane parks (parked_at) and waits for an operator (inboxctl lanes retry | skip).
 * A row appears with the lane's first answer.
 */
export const deliveryLanes = pgTable(
  'delivery_lanes',
  {
    destination: varchar('destination', { length: 30 }).notNull(),
    paymentId: bigint('payment_id', { mode: 'number' })
      .notNull()
      .references(() => payments.id, { onDelete: 'cascade' }),
    deliveredSequence: integer('delivered_sequence').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    /** A retry is due then (a job is queued for it); jobs for the lane that run earlier leave it alone. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    parkedAt: timestamp('parked_at', { withTimezone: true, mode: 'date' }),
    parkedReason: text('parked_reason'),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true, mode: 'date' }),
    /** The last answer's HTTP status; null when there was none (timeout, refused, hung up). */
    lastStatus: smallint('last_status'),
    lastError: text('last_error'),
    /** Events an operator skipped (inboxctl lanes skip), the last one's reason and time. */
    skippedEvents: integer('skipped_events').notNull().default(0),
    lastSkipReason: text('last_skip_reason'),
    lastSkippedAt: timestamp('last_skipped_at', { withTimezone: true, mode: 'date' }),
    /**
     * The last event the destination answered 2xx: the next event's `follows_sequence`, which tells
     * the application what was not sent in between (a skip, a kinds filter, the destination's
     * start). Null on lanes written before it existed: read as delivered_sequence.
     */
    answeredSequence: integer('answered_sequence'),
    /**
     * The head event's answers that asked to wait (429, or 503 with Retry-After) since its last
     * success, counted apart from attempts while the destination's patience lasts (since
     * throttled_since); they still lengthen the backoff.
     */
    throttles: integer('throttles').notNull().default(0),
    throttledSince: timestamp('throttled_since', { withTimezone: true, mode: 'date' }),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.destination, table.paymentId] }),
    // The few lanes that need attention: parked ones (inboxctl lanes --parked, the gauge), and the
    // failing ones a destination-wide outage is recognised by.
    index('delivery_lanes_parked_idx').on(table.destination).where(sql`${table.parkedAt} is not null`),
    index('delivery_lanes_failing_idx').on(table.destination).where(sql`(${table.attempts} > 0 or ${table.throttles} > 0) and ${table.parkedAt} is null`),
  ],
);

/**
 * A destination's state as a whole, shared by every instance: where it starts, disabled (it
 * answered 410 Gone) or backing off (many of its lanes failing at once). A row appears when a
 * worker first runs with the destination configured; `inboxctl lanes retire` deletes it.
 */
export const deliveryDestinations = pgTable('delivery_destinations', {
  name: varchar('name', { length: 30 }).primaryKey(),
  disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
  disabledReason: text('disabled_reason'),
  /** Lanes wait until then without spending attempts; the first job after it is the probe. */
  backoffUntil: timestamp('backoff_until', { withTimezone: true, mode: 'date' }),
  /** Consecutive backoffs without a 2xx: the next backoff doubles. */
  backoffTrips: integer('backoff_trips').notNull().default(0),
  /** Events written before then are not sent to it (its `start`, resolved when first seen). */
  startsAt: timestamp('starts_at', { withTimezone: true, mode: 'date' }),
  /** The `start` setting startsAt was resolved from: a changed setting is resolved again. */
  startSetting: text('start_setting'),
  /** Queuing the payments from before it was added: the last payment id queued; null when done or not asked for. */
  seedAfterPaymentId: bigint('seed_after_payment_id', { mode: 'number' }),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

/** Who retired which destination, when and why (inboxctl lanes retire), and what it cleared. */
export const deliveryDestinationRetirements = pgTable('delivery_destination_retirements', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  destination: varchar('destination', { length: 30 }).notNull(),
  retiredAt: timestamp('retired_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  retiredBy: text('retired_by').notNull(),
  reason: text('reason').notNull(),
  lanesCleared: integer('lanes_cleared').notNull(),
  parkedLanesCleared: integer('parked_lanes_cleared').notNull(),
  jobsCleared: integer('jobs_cleared').notNull(),
});
