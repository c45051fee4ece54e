import type { SqlExecutor } from '../../db/client.ts';
import type { LedgerPayout } from '../../gateways/shared/ledger.ts';

export interface StoredPayout {
  payoutId: string;
  amount: number;
  currency: string;
  status: string;
  arrivalAt: Date | null;
  balanceEntryId: string | null;
  createdAt: Date;
  entriesReadAt: Date | null;
}

export async function upsertPayout(db: SqlExecutor, provider: string, payout: LedgerPayout): Promise<void> {
  await db.executeSql(
    `insert into ledger_payouts (provider, payout_id, amount, currency, status, arrival_at, balance_entry_id, gateway_created_at, raw)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb)
     on conflict (provider, payout_id) do update set amount = excluded.amount, currency = excluded.currency, status = excluded.status,
       arrival_at = excluded.arrival_at, balance_entry_id = excluded.balance_entry_id, raw = excluded.raw`,
    [
      provider,
      payout.payoutId,
      payout.amount,
      payout.currency,
      payout.status,
      payout.arrivalAt?.toISOString() ?? null,
      payout.balanceEntryId ?? null,
      payout.createdAt.toISOString(),
      JSON.stringify(payout.raw),
    ],
  );
}

export async function markPayoutEntriesRead(db: SqlExecutor, provider: string, payoutId: string, at: Date): Promise<void> {
  await db.executeSql('update ledger_payouts set entries_read_at = $3 where provider = $1 and payout_id = $2', [provider, payoutId, at.toISOString()]);
}

export async function selectPayout(db: SqlExecutor, provider: string, payoutId: string): Promise<StoredPayout | undefined> {
  const { rows } = await db.executeSql<Record<string, unknown>>(
    `select payout_id, amount::float8 as amount, currency, status, extract(epoch from arrival_at) * 1000 as arrival_ms, balance_entry_id,
            extract(epoch from gateway_created_at) * 1000 as created_ms, extract(epoch from entries_read_at) * 1000 as read_ms
       from ledger_payouts where provider = $1 and payout_id = $2`,
    [provider, payoutId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const time = (value: unknown) => (value === null ? null : new Date(Number(value)));
  return {
    payoutId: row.payout_id as string,
    amount: Number(row.amount),
    currency: row.currency as string,
    status: row.status as string,
    arrivalAt: time(row.arrival_ms),
    balanceEntryId: row.balance_entry_id as string | null,
    createdAt: time(row.created_ms)!,
    entriesReadAt: time(row.read_ms),
  };
}

/**
 * Payouts the gateway announced by webhook (payout.paid, payout.reconciliation_completed, …) to
 * `account` (null: the provider's own) since `since` after their entries were last read, or never read: payout.paid may come before Stripe has
 * finished reconciling the payout, so its reconciliation_completed, later, reads them again.
 */
export async function selectAnnouncedPayouts(
  db: SqlExecutor,
  provider: string,
  eventTypes: readonly string[],
  since: Date,
  account: string | null = null,
): Promise<string[]> {
  const { rows } = await db.executeSql<{ payout_id: string }>(
    `select distinct i.resource_id as payout_id from webhook_inbox i
      where i.provider = $1 and i.event_type = any($2::text[]) and i.received_at >= $3 and i.resource_id is not null
        and i.account is not distinct from $4
        and not exists (select 1 from ledger_payouts p where p.provider = i.provider and p.payout_id = i.resource_id and p.entries_read_at >= i.received_at)`,
    [provider, [...eventTypes], since.toISOString(), account],
  );
  return rows.map((row) => row.payout_id);
}
