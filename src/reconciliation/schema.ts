import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { LEDGER_TEXT_LIMITS, ledgerEntryKinds } from '../gateways/shared/ledger.ts';
import { findingKinds, runStatuses } from './finding.ts';

const oneOf = (column: unknown, values: readonly string[]) => sql`${column} in (${sql.raw(values.map((v) => `'${v}'`).join(', '))})`;

/**
 * The gateways' settlement ledgers, one row per entry as the gateway identifies it: a run reads
 * pages and upserts them by (provider, entry_id), so reading the same page twice (a run resumed,
 * two windows overlapping) changes nothing. Amounts in minor units, signed as the gateway signs
 * them; the currency as the gateway wrote it. No foreign key to payments: an entry is kept whether
 * or not the inbox ever heard of its payment (that is what a finding is about).
 */
export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: varchar('provider', { length: 30 }).notNull(),
    entryId: varchar('entry_id', { length: LEDGER_TEXT_LIMITS.id }).notNull(),
    // The account whose ledger listed it (a Connect account, an Asaas subaccount); null: the provider's own.
    account: varchar('account', { length: 150 }),
    kind: varchar('kind', { length: 20 }).notNull(),
    gatewayType: varchar('gateway_type', { length: LEDGER_TEXT_LIMITS.type }).notNull(),
    chargeId: varchar('charge_id', { length: LEDGER_TEXT_LIMITS.id }),
    paymentKey: varchar('payment_key', { length: LEDGER_TEXT_LIMITS.id }),
    payoutId: varchar('payout_id', { length: LEDGER_TEXT_LIMITS.id }),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    fee: bigint('fee', { mode: 'number' }).notNull(),
    net: bigint('net', { mode: 'number' }).notNull(),
    currency: varchar('currency', { length: 3 }).notNull(),
    status: varchar('status', { length: LEDGER_TEXT_LIMITS.status }),
    availableAt: timestamp('available_at', { withTimezone: true, mode: 'date' }),
    gatewayCreatedAt: timestamp('gateway_created_at', { withTimezone: true, mode: 'date' }).notNull(),
    raw: jsonb('raw').notNull(),
    firstSeenAt: timestamp('first_seen_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('ledger_entries_provider_entry_id_key').on(table.provider, table.entryId),
    index('ledger_entries_provider_charge_id_idx').on(table.provider, table.chargeId),
    index('ledger_entries_provider_payment_key_idx').on(table.provider, table.paymentKey),
    index('ledger_entries_provider_payout_id_idx').on(table.provider, table.payoutId),
    index('ledger_entries_provider_created_idx').on(table.provider, table.gatewayCreatedAt),
    check('ledger_entries_kind_check', oneOf(table.kind, ledgerEntryKinds)),
  ],
);

/** Payouts (Stripe), upserted by (provider, payout_id): what reached the bank, to add its entries up against. */
export const ledgerPayouts = pgTable(
  'ledger_payouts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: varchar('provider', { length: 30 }).notNull(),
    payoutId: varchar('payout_id', { length: 150 }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: varchar('currency', { length: 3 }).notNull(),
    status: varchar('status', { length: 30 }).notNull(),
    arrivalAt: timestamp('arrival_at', { withTimezone: true, mode: 'date' }),
    balanceEntryId: varchar('balance_entry_id', { length: 150 }),
    gatewayCreatedAt: timestamp('gateway_created_at', { withTimezone: true, mode: 'date' }).notNull(),
    raw: jsonb('raw').notNull(),
    // Set once every page of its entries has been read: only then is their sum worth comparing.
    entriesReadAt: timestamp('entries_read_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [uniqueIndex('ledger_payouts_provider_payout_id_key').on(table.provider, table.payoutId)],
);

/**
 * One `inboxctl reconcile` (or cron) run per provider and scope. A run that stops part-way (the
 * gateway down, rate limited past what a run waits) is `partial` with the cursor of the next page
 * to read: the next run of the same scope resumes it there instead of starting over.
 */
export const reconciliationRuns = pgTable(
  'reconciliation_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: varchar('provider', { length: 30 }).notNull(),
    // `window`: entries created in [since, until); `payout`: one payout's entries.
    scope: varchar('scope', { length: 10 }).notNull(),
    payoutId: varchar('payout_id', { length: 150 }),
    // The account whose ledger the run read on its behalf; null: the provider's own (a platform run).
    account: varchar('account', { length: 150 }),
    since: timestamp('since', { withTimezone: true, mode: 'date' }).notNull(),
    until: timestamp('until', { withTimezone: true, mode: 'date' }).notNull(),
    status: varchar('status', { length: 10 }).notNull(),
    // The next page to read (undefined: the first); kept when the run stops so it can resume.
    cursor: text('cursor'),
    pages: integer('pages').notNull().default(0),
    entriesRead: integer('entries_read').notNull().default(0),
    entriesNew: integer('entries_new').notNull().default(0),
    unreadable: integer('unreadable').notNull().default(0),
    findings: integer('findings').notNull().default(0),
    error: text('error'),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    // The partial run this one picked up, when it resumed one.
    resumedRunId: bigint('resumed_run_id', { mode: 'number' }),
  },
  (table) => [
    index('reconciliation_runs_provider_scope_idx').on(table.provider, table.scope, table.id),
    check('reconciliation_runs_status_check', oneOf(table.status, runStatuses)),
  ],
);

/**
 * What reconciliation found, one row per (provider, kind, subject): found again by a later run it
 * is the same row (counted once), no longer true it is `resolved`. `evidence` holds the ledger
 * entries and payment fields it was decided on, as they were.
 */
export const reconciliationFindings = pgTable(
  'reconciliation_findings',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: varchar('provider', { length: 30 }).notNull(),
    kind: varchar('kind', { length: 40 }).notNull(),
    // The payment key, the ledger entry id or the payout id the finding is about.
    subject: varchar('subject', { length: 150 }).notNull(),
    paymentId: bigint('payment_id', { mode: 'number' }),
    // The account of the run that last found it; null: the provider's own.
    account: varchar('account', { length: 150 }),
    status: varchar('status', { length: 10 }).notNull().default('open'),
    evidence: jsonb('evidence').notNull(),
    firstRunId: bigint('first_run_id', { mode: 'number' }).notNull(),
    lastRunId: bigint('last_run_id', { mode: 'number' }).notNull(),
    firstFoundAt: timestamp('first_found_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastFoundAt: timestamp('last_found_at', { withTimezone: true, mode: 'date' }).notNull(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true, mode: 'date' }),
  },
  (table) => [
    uniqueIndex('reconciliation_findings_provider_kind_subject_key').on(table.provider, table.kind, table.subject),
    index('reconciliation_findings_status_idx').on(table.status, table.provider),
    index('reconciliation_findings_payment_id_idx').on(table.paymentId),
    check('reconciliation_findings_kind_check', oneOf(table.kind, findingKinds)),
    check('reconciliation_findings_status_check', oneOf(table.status, ['open', 'resolved'])),
  ],
);
