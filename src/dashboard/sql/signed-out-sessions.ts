import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { dashboardSignedOutSessions } from '../schema.ts';

/**
 * Records a session as signed out until it would have expired anyway; the same statement deletes
 * the records past that time, so the table holds only sign-outs whose tokens could still be used.
 */
export async function recordSignedOutSession(db: Database, nonce: string, expiresAt: Date, now: Date): Promise<void> {
  await db.execute(sql`
    with expired as (delete from ${dashboardSignedOutSessions} where expires_at <= ${now.toISOString()}::timestamptz)
    insert into ${dashboardSignedOutSessions} (nonce, expires_at) values (${nonce}, ${expiresAt.toISOString()}::timestamptz)
    on conflict (nonce) do nothing`);
}

/** Whether the session was signed out: one primary-key lookup, made only for an authentic, unexpired cookie. */
export async function isSessionSignedOut(db: Database, nonce: string): Promise<boolean> {
  const rows = await db.execute(sql`select 1 from ${dashboardSignedOutSessions} where nonce = ${nonce}`);
  return rows.length > 0;
}
