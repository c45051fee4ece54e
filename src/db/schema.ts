import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, foreignKey, index, jsonb, pgTable, primaryKey, smallint, text, timestamp, varchar } from 'drizzle-orm/pg-core';
import { bytea } from './bytea.ts';

export const inboxStatuses = ['pending', 'processed', 'ignored', 'failed'] as const;
export type InboxStatus = (typeof inboxStatuses)[number];

/**
 * What processing made of an event, committed with its batch: it changed something (`processed`)
 * or nothing (`ignored`). `failed` is not one: the dead-letter worker sets it later.
 */
export type SettledStatus = Extract<InboxStatus, 'processed' | 'ignored'>;

/**
 * Why processing left an event as it did (webhook_inbox.decision; `ignored` stays the status, this
 * says why). The payments domain decides the payment ones (src/domain/payments/event-decision.ts);
 * `not_a_payment_event` is an event no handler is registered for, `unknown_payment` a `require`
 * mode event whose payment the application has not created (yet).
 */
export const eventDecisions = [
  'applied',
  'stale',
  'rejected_transition',
  'rejected_amount',
  'superseded',
  'refetched',
  'not_a_payment_event',
  'unknown_payment',
] as const;
export type EventDecisionName = (typeof eventDecisions)[number];

/**
 * How an event reached the inbox: sent by the gateway (`webhook`, its signature verified), or
 * listed from the gateway's API by `inboxctl backfill` (`backfill`) because the webhook request never came.
 */
export const eventSources = ['webhook', 'backfill'] as const;
export type EventSource = (typeof eventSources)[number];

/**
 * Every webhook request that passed signature verification, stored before the 200 is sent.
 * Deduplication is webhook_event_keys' primary key, claimed in the same statement: never
 * check-then-insert.
 *
 * Partitioned by month of received_at (PostgreSQL declarative partitioning, which drizzle-kit
 * cannot express: the migration drizzle/0012_partitioned_inbox.sql is hand-written, and
 * src/db/inbox-partitions.ts creates the months ahead). So every unique key includes received_at:
 * the primary key is (id, received_at), and (provider, event_id) is a plain index here.
 */
export const webhookInbox = pgTable(
  'webhook_inbox',
  {
    id: bigserial('id', { mode: 'number' }).notNull(),
    provider: varchar('provider', { length: 30 }).notNull(),
    eventId: varchar('event_id', { length: 150 }).notNull(),
    eventType: varchar('event_type', { length: 80 }).notNull(),
    resourceId: varchar('resource_id', { length: 150 }),
    payload: jsonb('payload').notNull(),
    // True when jsonb could not hold the JSON as sent and the payload holds a replacement: U+0000
    // and lone surrogates as U+FFFD, invalid UTF-8 decoded as U+FFFD, numbers beyond a double as
    // their source text (src/inbox/event-row.ts). raw_body is exact either way.
    payloadLossy: boolean('payload_lossy').notNull().default(false),
    // The exact bytes the gateway signed: payload (jsonb) normalises whitespace and key order, so
    // audits, archives and re-verification need the original. Non-JSON bodies (form-encoded
    // postbacks) only exist faithfully here.
    rawBody: bytea('raw_body').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    status: varchar('status', { length: 10 }).$type<InboxStatus>().notNull().default('pending'),
    attempts: smallint('attempts').notNull().default(0),
    lastError: text('last_error'),
    processedAt: timestamp('processed_at', { withTimezone: true, mode: 'date' }),
    // What the event meant when it was processed: its payment fact, or the gateway snapshot its
    // refetch read (which the payload cannot give back). A payment fact is copied into
    // payment_facts as the row settles (trigger, drizzle/0018), where later folds of the charge
    // read it whatever becomes of this row. Null before processing and after a replay, which
    // recomputes it.
    fact: jsonb('fact'),
    // What the event says (type, resource, payment status, occurred_at, money): a hash a resend
    // repeats exactly, so a duplicate that says something else is told apart without reading the
    // payload (src/inbox/event-fingerprint.ts). Null on rows stored before it existed: those are
    // never judged.
    fingerprint: text('fingerprint'),
    // Why the last processing attempt left the row as it is (eventDecisions), and its particulars
    // (from → to, the newer occurred_at known, the snapshot's read time): "ignored" alone cannot
    // tell a dispute refused after a refund from an event type nobody maps. Null before
    // processing, after a replay, and for events a custom handler settled without one.
    decision: text('decision').$type<EventDecisionName>(),
    decisionDetail: jsonb('decision_detail'),
    // Only `webhook` rows say the gateway is still sending: the last-webhook-request gauge and
    // `inboxctl stats` read those, so a backfill never hides a silent endpoint.
    source: varchar('source', { length: 10 }).$type<EventSource>().notNull().default('webhook'),
    // How the event was authenticated (src/gateways/shared/proof.ts): scheme, which configured secret
    // matched (position and fingerprint, never the secret), the signed timestamp, when, and the
    // signature headers `inboxctl verify` checks again. Null on rows stored before it existed.
    verification: jsonb('verification'),
    // The gateway account the event belongs to when one endpoint receives for many (a Stripe
    // Connect platform's connected account, `acct_…`): what the driver read from the event. Null
    // for a direct integration. An attribute, not part of the key (docs/accounts.md).
    account: varchar('account', { length: 150 }),
  },
  (table) => [
    primaryKey({ name: 'webhook_inbox_pkey', columns: [table.id, table.receivedAt] }),
    index('webhook_inbox_provider_event_id_idx').on(table.provider, table.eventId),
    // provider last, after the range column: every (status, received_at) range reads it as before,
    // and the counts by provider × status behind the gauges and stats become index-only scans
    // instead of visiting every heap page of the backlog and of the last hour
    // (bench/README.md#where-the-time-goes).
    index('webhook_inbox_status_received_at_provider_idx').on(table.status, table.receivedAt, table.provider),
    index('webhook_inbox_provider_resource_id_idx').on(table.provider, table.resourceId),
    // The dashboard's event list by decision (rejected_amount: "check the charge at the gateway"),
    // newest first: a walk from the last id. Partial: `applied`, most of the table, is never the
    // one looked for, and a row gets its entry at processing, not on the ingest path. Without it a
    // rare decision was a walk of the whole primary key (EXPLAIN in test/operations/query-plans.test.ts).
    index('webhook_inbox_decision_id_idx').on(table.decision, table.id).where(sql`${table.decision} <> 'applied'`),
    // The newest webhook request per provider (last-webhook-request gauge, stats): one short backward walk per
    // provider, never a scan. Partial: backfilled rows are not webhook requests.
    index('webhook_inbox_last_delivery_idx').on(table.provider, table.receivedAt).where(sql`${table.source} = 'webhook'`),
    // The dashboard's event list filtered by account, newest first. Partial: a direct integration's
    // events (account null) get no entry, so the ingest path of one pays nothing for it.
    index('webhook_inbox_account_id_idx').on(table.account, table.id).where(sql`${table.account} is not null`),
    check('webhook_inbox_status_check', sql`${table.status} in ('pending', 'processed', 'ignored', 'failed')`),
    check(
      'webhook_inbox_decision_check',
      sql`${table.decision} in ('applied', 'stale', 'rejected_transition', 'rejected_amount', 'superseded', 'refetched', 'not_a_payment_event', 'unknown_payment')`,
    ),
    check('webhook_inbox_source_check', sql`${table.source} in ('webhook', 'backfill')`),
  ],
);

export type InboxRow = typeof webhookInbox.$inferSelect;

/**
 * The dedupe keys, kept far longer than the payloads (`keyRetentionDays` against `retentionDays`):
 * a resend months after its row was archived and deleted still finds its key here and is answered
 * as a duplicate, not processed again. Every webhook request claims its key here first, in the batch's
 * transaction; only the webhook requests whose key was new are stored in webhook_inbox. A few dozen bytes
 * a key, so 400 days of keys cost less than a week of payloads.
 */
export const webhookEventKeys = pgTable(
  'webhook_event_keys',
  {
    provider: varchar('provider', { length: 30 }).notNull(),
    eventId: varchar('event_id', { length: 150 }).notNull(),
    /** The first webhook request's fingerprint (null for keys taken over from rows stored before fingerprints). */
    fingerprint: text('fingerprint'),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'webhook_event_keys_pkey', columns: [table.provider, table.eventId] }),
    // Key retention deletes one provider's oldest keys.
    index('webhook_event_keys_provider_received_at_idx').on(table.provider, table.receivedAt),
  ],
);

/**
 * Duplicates that said something else: a webhook request with the key of a stored event (provider,
 * event_id) whose fingerprint differs. It got 200 like any duplicate (the stored event stays the
 * truth the inbox processed); its exact bytes and what it said differently are kept here, one row
 * per such webhook request. They go with their event when retention deletes it.
 */
export const webhookInboxConflicts = pgTable(
  'webhook_inbox_conflicts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    inboxId: bigint('inbox_id', { mode: 'number' }).notNull(),
    /** The stored event's received_at: with inbox_id, the key of its (partitioned) row. */
    inboxReceivedAt: timestamp('inbox_received_at', { withTimezone: true, mode: 'date' }).notNull(),
    provider: varchar('provider', { length: 30 }).notNull(),
    eventId: varchar('event_id', { length: 150 }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** The conflicting webhook request's fingerprint (the stored event's is on its row). */
    fingerprint: text('fingerprint').notNull(),
    /** [{ field, stored, received }]: the fields of the meaning that differ (MeaningDifference). */
    differences: jsonb('differences').notNull(),
    rawBody: bytea('raw_body').notNull(),
  },
  (table) => [
    foreignKey({
      name: 'webhook_inbox_conflicts_inbox_fk',
      columns: [table.inboxId, table.inboxReceivedAt],
      foreignColumns: [webhookInbox.id, webhookInbox.receivedAt],
    }).onDelete('cascade'),
    index('webhook_inbox_conflicts_inbox_id_idx').on(table.inboxId, table.inboxReceivedAt),
    index('webhook_inbox_conflicts_received_at_idx').on(table.receivedAt),
  ],
);
