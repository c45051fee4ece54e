import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Dashboard sessions ended by signing out. A session is a signed token any instance can check on
 * its own (admin-access.ts), so a copy of its cookie taken before the sign-out would stay good
 * until it expires; this table is what every instance asks instead. A row is kept only until the
 * session would have expired anyway (expires_at), so it holds at most the last 8 hours' sign-outs.
 * The nonce alone proves nothing: a cookie is only good with its HMAC, keyed by the admin token.
 */
export const dashboardSignedOutSessions = pgTable('dashboard_signed_out_sessions', {
  nonce: text('nonce').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
});
