import type { SqlExecutor } from '../../db/client.ts';
import type { PaymentToMatch } from '../match.ts';

interface PaymentRow {
  id: number;
  gateway_charge_id: string;
  status: string;
  amount: number | null;
  amount_refunded: number;
  currency: string | null;
  created_ms: number;
  updated_ms: number;
}

const COLUMNS = `id::float8 as id, gateway_charge_id, status, amount::float8 as amount, amount_refunded::float8 as amount_refunded, currency,
  extract(epoch from created_at) * 1000 as created_ms, extract(epoch from updated_at) * 1000 as updated_ms`;

const toPayment = (row: PaymentRow): PaymentToMatch => ({
  id: Number(row.id),
  key: row.gateway_charge_id,
  status: row.status,
  amount: row.amount === null ? null : Number(row.amount),
  amountRefunded: Number(row.amount_refunded),
  currency: row.currency,
  createdAt: new Date(Number(row.created_ms)),
  updatedAt: new Date(Number(row.updated_ms)),
});

/**
 * The provider's payments of `account` (null: those without one, the provider's own) the inbox
 * first saw in the window, and those under any of `keys` (the payments the window's entries name,
 * whatever their account: an entry's payment is matched, never reported missing). Only the payment's gateway key and its money columns are
 * read: matching does not depend on how its facts are stored.
 */
export async function selectPaymentsInScope(
  db: SqlExecutor,
  provider: string,
  window: { since: Date; until: Date } | undefined,
  keys: readonly string[],
  account: string | null = null,
): Promise<PaymentToMatch[]> {
  // No window: the payments under these keys only (a payout's, the API's).
  const { rows } = await db.executeSql<PaymentRow>(
    `select ${COLUMNS} from payments where provider = $1 and ((created_at >= $2 and created_at < $3 and account is not distinct from $5) or gateway_charge_id = any($4::text[]))`,
    [provider, window?.since.toISOString() ?? null, window?.until.toISOString() ?? null, [...keys], account],
  );
  return rows.map(toPayment);
}

/** The accounts the provider's payments first seen since `since` name: a Connect provider's accounts the cron reconciles. */
export async function selectAccountsOfPayments(db: SqlExecutor, provider: string, since: Date): Promise<string[]> {
  const { rows } = await db.executeSql<{ account: string }>(
    'select distinct account from payments where provider = $1 and account is not null and created_at >= $2 order by account',
    [provider, since.toISOString()],
  );
  return rows.map((row) => row.account);
}
