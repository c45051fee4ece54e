import type { SqlExecutor } from '../../db/client.ts';
import type { LedgerEntry } from '../../gateways/shared/ledger.ts';
import type { StoredEntry } from '../settlement.ts';
import { withoutNul } from '../without-nul.ts';

/**
 * Upserts a page of entries by (provider, entry_id): a page read twice (a resumed run, windows
 * that overlap) changes no count. A payout id, once known, is kept when the same entry is listed
 * again without one (the window listing does not say which payout took it). Returns how many
 * rows were new.
 */
export async function upsertLedgerEntries(
  db: SqlExecutor,
  provider: string,
  entries: readonly LedgerEntry[],
  seenAt: Date,
  account: string | null = null,
): Promise<number> {
  if (entries.length === 0) return 0;
  const column = <T>(pick: (e: LedgerEntry) => T) => entries.map(pick);
  const { rows } = await db.executeSql<{ inserted: boolean }>(
    `insert into ledger_entries as l (provider, entry_id, account, kind, gateway_type, charge_id, payment_key, payout_id, amount, fee, net, currency, status, available_at, gateway_created_at, raw, first_seen_at, last_seen_at)
     select $1, t.entry_id, $17, t.kind, t.gateway_type, t.charge_id, t.payment_key, t.payout_id, t.amount, t.fee, t.net, t.currency, t.status, t.available_at, t.created_at, t.raw::jsonb, $16, $16
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int8[], $9::int8[], $10::int8[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[], $15::text[])
         as t(entry_id, kind, gateway_type, charge_id, payment_key, payout_id, amount, fee, net, currency, status, available_at, created_at, raw)
     on conflict (provider, entry_id) do update set
       account = excluded.account, kind = excluded.kind, gateway_type = excluded.gateway_type, charge_id = excluded.charge_id, payment_key = excluded.payment_key,
       payout_id = coalesce(excluded.payout_id, l.payout_id), amount = excluded.amount, fee = excluded.fee, net = excluded.net,
       currency = excluded.currency, status = excluded.status, available_at = excluded.available_at, raw = excluded.raw, last_seen_at = excluded.last_seen_at
     returning (xmax = 0) as inserted`,
    [
      provider,
      column((e) => e.entryId),
      column((e) => e.kind),
      column((e) => e.gatewayType),
      column((e) => e.chargeId ?? null),
      column((e) => e.paymentKey ?? null),
      column((e) => e.payoutId ?? null),
      column((e) => String(e.amount)),
      column((e) => String(e.fee)),
      column((e) => String(e.net)),
      column((e) => e.currency),
      column((e) => e.status ?? null),
      column((e) => e.availableAt?.toISOString() ?? null),
      column((e) => e.createdAt.toISOString()),
      column((e) => JSON.stringify(withoutNul(e.raw))),
      seenAt.toISOString(),
      account,
    ],
  );
  return rows.filter((row) => row.inserted).length;
}

interface EntryRow {
  entry_id: string;
  kind: string;
  gateway_type: string;
  charge_id: string | null;
  payment_key: string | null;
  payout_id: string | null;
  amount: number;
  fee: number;
  net: number;
  currency: string;
  status: string | null;
  available_ms: number | null;
  created_ms: number;
}

const ENTRY_COLUMNS = `entry_id, kind, gateway_type, charge_id, payment_key, payout_id, amount::float8 as amount, fee::float8 as fee, net::float8 as net, currency, status,
  extract(epoch from available_at) * 1000 as available_ms, extract(epoch from gateway_created_at) * 1000 as created_ms`;

function storedEntry(row: EntryRow): StoredEntry {
  return {
    entryId: row.entry_id,
    kind: row.kind,
    gatewayType: row.gateway_type,
    chargeId: row.charge_id,
    paymentKey: row.payment_key,
    payoutId: row.payout_id,
    amount: Number(row.amount),
    fee: Number(row.fee),
    net: Number(row.net),
    currency: row.currency,
    status: row.status,
    availableAt: row.available_ms === null ? null : new Date(Number(row.available_ms)),
    createdAt: new Date(Number(row.created_ms)),
  };
}

/**
 * Every entry the account's ledger listed created in the window (none without one; account null:
 * the provider's own ledger), and every entry of these payment keys whenever created: what
 * matching needs.
 */
export async function selectEntriesForMatching(
  db: SqlExecutor,
  provider: string,
  window: { since: Date; until: Date } | undefined,
  paymentKeys: readonly string[],
  account: string | null = null,
): Promise<StoredEntry[]> {
  const { rows } = await db.executeSql<EntryRow>(
    `select ${ENTRY_COLUMNS} from ledger_entries
      where provider = $1 and ((gateway_created_at >= $2 and gateway_created_at < $3 and account is not distinct from $5) or payment_key = any($4::text[]) or charge_id = any($4::text[]))`,
    [provider, window?.since.toISOString() ?? null, window?.until.toISOString() ?? null, [...paymentKeys], account],
  );
  return rows.map(storedEntry);
}

/** The entries of one payout, as listed by it. */
export async function selectEntriesOfPayout(db: SqlExecutor, provider: string, payoutId: string): Promise<StoredEntry[]> {
  const { rows } = await db.executeSql<EntryRow>(
    `select ${ENTRY_COLUMNS} from ledger_entries where provider = $1 and payout_id = $2 order by gateway_created_at, entry_id`,
    [provider, payoutId],
  );
  return rows.map(storedEntry);
}

/** The entries of one payment, by any of its keys (Stripe: the PaymentIntent, or the charge id a legacy row is under). */
export async function selectEntriesOfPayment(db: SqlExecutor, provider: string, keys: readonly string[]): Promise<StoredEntry[]> {
  const { rows } = await db.executeSql<EntryRow>(
    `select ${ENTRY_COLUMNS} from ledger_entries where provider = $1 and (payment_key = any($2::text[]) or charge_id = any($2::text[])) order by gateway_created_at, entry_id`,
    [provider, [...keys]],
  );
  return rows.map(storedEntry);
}
