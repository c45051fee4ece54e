import { sql } from 'drizzle-orm';
import { bigint, bigserial, check, pgTable, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

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
    status: varchar('status', { length: 20 }).notNull(),
    // Minor units (cents): gateways that send decimals are converted by their driver.
    amount: bigint('amount', { mode: 'number' }),
    amountRefunded: bigint('amount_refunded', { mode: 'number' }).notNull().default(0),
    currency: varchar('currency', { length: 3 }),
    lastGatewayEventAt: timestamp('last_gateway_event_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    uniqueIndex('payments_provider_gateway_charge_id_key').on(table.provider, table.gatewayChargeId),
    check(
      'payments_status_check',
      sql`${table.status} in ('pending', 'paid', 'failed', 'canceled', 'refunded', 'partially_refunded', 'disputed', 'charged_back')`,
    ),
  ],
);

export type PaymentRow = typeof payments.$inferSelect;
