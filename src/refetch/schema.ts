import { sql } from 'drizzle-orm';
import { check, pgTable, primaryKey, timestamp, varchar } from 'drizzle-orm/pg-core';

/** What the gateway last said of the platform's access to an account: `authorized` or `deauthorized`. */
export const accountAccessStates = ['authorized', 'deauthorized'] as const;
export type AccountAccessState = (typeof accountAccessStates)[number];

/**
 * The accounts a platform may no longer read at the gateway: Stripe's
 * `account.application.deauthorized` (and `.authorized` again) for a Connect account. One row per
 * (provider, account), the newest event's word (by its occurred_at). While `deauthorized`, refetch,
 * backfill and ledger reads skip the account (the API would answer 401/403 and trip its breaker);
 * its webhooks are still stored and folded from their payloads (docs/accounts.md).
 */
export const gatewayAccountAccess = pgTable(
  'gateway_account_access',
  {
    provider: varchar('provider', { length: 30 }).notNull(),
    account: varchar('account', { length: 150 }).notNull(),
    state: varchar('state', { length: 20 }).$type<AccountAccessState>().notNull(),
    /** The gateway event that said it, and when it happened there (an older event never overrides a newer one). */
    eventId: varchar('event_id', { length: 150 }).notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull(),
    recordedAt: timestamp('recorded_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'gateway_account_access_pkey', columns: [table.provider, table.account] }),
    check('gateway_account_access_state_check', sql`${table.state} in ('authorized', 'deauthorized')`),
  ],
);
