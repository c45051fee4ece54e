import { bigserial, check, index, jsonb, pgTable, smallint, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';

/**
 * The seed's table, as issue 2 ("Receive and store") gives it: `webhook_inbox` with exactly these
 * columns, unique (provider, event_id), an index on (status, received_at) and one on (provider,
 * resource_id). One table, no partitions, no separate dedupe keys, no raw body: what a team
 * writing from the brief's first step starts with. The inbox's own schema (src/db/schema.ts) grew
 * past it for retention by month, exact bytes for re-verification and keys that outlive payloads.
 */
export const seedInbox = pgTable(
  'webhook_inbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    provider: varchar('provider', { length: 30 }).notNull(),
    eventId: varchar('event_id', { length: 150 }).notNull(),
    eventType: varchar('event_type', { length: 80 }).notNull(),
    resourceId: varchar('resource_id', { length: 150 }),
    payload: jsonb('payload').notNull(),
    occurredAt: timestamp('occurred_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    status: varchar('status', { length: 10 }).notNull().default('pending'),
    attempts: smallint('attempts').notNull().default(0),
    lastError: text('last_error'),
    processedAt: timestamp('processed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('webhook_inbox_provider_event_id_key').on(t.provider, t.eventId),
    index('webhook_inbox_status_received_at_idx').on(t.status, t.receivedAt),
    index('webhook_inbox_provider_resource_id_idx').on(t.provider, t.resourceId),
    check('webhook_inbox_status_check', sql`${t.status} in ('pending', 'processed', 'ignored', 'failed')`),
  ],
);

/** The same table as DDL: the seed peer's deploy step, run by the bench before it starts the peer. */
export const SEED_TABLE_DDL = `
create table webhook_inbox (
  id bigserial primary key,
  provider varchar(30) not null,
  event_id varchar(150) not null,
  event_type varchar(80) not null,
  resource_id varchar(150),
  payload jsonb not null,
  occurred_at timestamptz not null,
  received_at timestamptz not null default now(),
  status varchar(10) not null default 'pending' constraint webhook_inbox_status_check check (status in ('pending', 'processed', 'ignored', 'failed')),
  attempts smallint not null default 0,
  last_error text,
  processed_at timestamptz
);
create unique index webhook_inbox_provider_event_id_key on webhook_inbox (provider, event_id);
create index webhook_inbox_status_received_at_idx on webhook_inbox (status, received_at);
create index webhook_inbox_provider_resource_id_idx on webhook_inbox (provider, resource_id);
`;
