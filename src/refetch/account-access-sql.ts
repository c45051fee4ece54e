import { and, asc, eq, sql } from 'drizzle-orm';
import type { Database, Transaction } from '../db/client.ts';
import { type AccountAccessState, gatewayAccountAccess } from './schema.ts';

export interface AccountAccessChange {
  provider: string;
  account: string;
  state: AccountAccessState;
  eventId: string;
  occurredAt: Date;
}

/**
 * Records what the gateway said of the platform's access to accounts, one statement. The newest
 * word wins by the event's occurred_at: a deauthorization resent after a later re-authorization
 * does not stop reads again. Rows in key order, so two batches never wait on each other crosswise.
 */
export async function recordAccountAccess(tx: Transaction, changes: readonly AccountAccessChange[]): Promise<void> {
  if (changes.length === 0) return;
  const newest = new Map<string, AccountAccessChange>();
  for (const change of changes) {
    const key = `${change.provider}\u0000${change.account}`;
    const known = newest.get(key);
    if (!known || known.occurredAt <= change.occurredAt) newest.set(key, change);
  }
  const rows = [...newest.values()].sort((a, b) => (a.provider === b.provider ? (a.account < b.account ? -1 : 1) : a.provider < b.provider ? -1 : 1));
  await tx
    .insert(gatewayAccountAccess)
    .values(rows.map((row) => ({ ...row, recordedAt: new Date() })))
    .onConflictDoUpdate({
      target: [gatewayAccountAccess.provider, gatewayAccountAccess.account],
      set: { state: sql`excluded.state`, eventId: sql`excluded.event_id`, occurredAt: sql`excluded.occurred_at`, recordedAt: sql`excluded.recorded_at` },
      setWhere: sql`${gatewayAccountAccess.occurredAt} <= excluded.occurred_at`,
    });
}

/** Whether the platform was told it may no longer read this account: the primary key, one row at most. */
export async function isAccountDeauthorized(db: Database, provider: string, account: string): Promise<boolean> {
  const [row] = await db
    .select({ state: gatewayAccountAccess.state })
    .from(gatewayAccountAccess)
    .where(and(eq(gatewayAccountAccess.provider, provider), eq(gatewayAccountAccess.account, account)));
  return row?.state === 'deauthorized';
}

export interface DeauthorizedAccount {
  provider: string;
  account: string;
  /** When the gateway said so (its event's time). */
  since: Date;
  eventId: string;
}

/** Every account whose reads are stopped, for `inboxctl stats` and the dashboard. */
export async function selectDeauthorizedAccounts(db: Database): Promise<DeauthorizedAccount[]> {
  const rows = await db
    .select({
      provider: gatewayAccountAccess.provider,
      account: gatewayAccountAccess.account,
      since: gatewayAccountAccess.occurredAt,
      eventId: gatewayAccountAccess.eventId,
    })
    .from(gatewayAccountAccess)
    .where(eq(gatewayAccountAccess.state, 'deauthorized'))
    .orderBy(asc(gatewayAccountAccess.provider), asc(gatewayAccountAccess.account));
  return rows;
}
