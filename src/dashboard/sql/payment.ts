import type { SqlExecutor } from '../../db/client.ts';
import type { PaymentStatus, SplitShare } from '../../domain/payments/payment-fact.ts';
import { dateOf, dateOrNull, epochMs } from '../../inbox/sql/statement.ts';

/** A payment as the dashboard shows it: the payments row, named and typed. */
export interface PaymentSummary {
  id: number;
  provider: string;
  chargeId: string;
  status: PaymentStatus;
  /** Minor units; null while no event has said it. */
  amount: number | null;
  amountRefunded: number;
  currency: string | null;
  lastGatewayEventAt: Date | null;
  /** Payment events written for it so far (payment_events.sequence of the last). */
  eventSequence: number;
  createdAt: Date;
  updatedAt: Date;
  /** The gateway account whose money it is (docs/accounts.md); null for a direct integration. */
  account: string | null;
  /** How the charge is divided between recipients (Pagar.me); null when no event said one. */
  split: SplitShare[] | null;
}

const PAYMENT_COLUMNS = `p.id::float8 as id, p.provider, p.gateway_charge_id, p.status, p.amount::float8 as amount, p.amount_refunded::float8 as amount_refunded,
  p.currency, ${epochMs('p.last_gateway_event_at')} as last_gateway_event_at_ms, p.event_sequence,
  ${epochMs('p.created_at')} as created_at_ms, ${epochMs('p.updated_at')} as updated_at_ms, p.account, p.split`;

interface PaymentRow {
  id: number;
  provider: string;
  gateway_charge_id: string;
  status: PaymentStatus;
  amount: number | null;
  amount_refunded: number;
  currency: string | null;
  last_gateway_event_at_ms: number | null;
  event_sequence: number;
  created_at_ms: number;
  updated_at_ms: number;
  account: string | null;
  split: SplitShare[] | null;
}

function toPayment(row: PaymentRow): PaymentSummary {
  return {
    id: row.id,
    provider: row.provider,
    chargeId: row.gateway_charge_id,
    status: row.status,
    amount: row.amount,
    amountRefunded: row.amount_refunded,
    currency: row.currency,
    lastGatewayEventAt: dateOrNull(row.last_gateway_event_at_ms),
    eventSequence: row.event_sequence,
    createdAt: dateOf(row.created_at_ms),
    updatedAt: dateOf(row.updated_at_ms),
    account: row.account,
    split: row.split,
  };
}

/** One payment by its natural key, on payments' unique (provider, gateway_charge_id) index. */
export async function selectPaymentByKey(db: SqlExecutor, provider: string, chargeId: string): Promise<PaymentSummary | undefined> {
  const { rows } = await db.executeSql<PaymentRow>(`select ${PAYMENT_COLUMNS} from payments p where p.provider = $1 and p.gateway_charge_id = $2`, [
    provider,
    chargeId,
  ]);
  return rows[0] && toPayment(rows[0]);
}

/** The payment the event touched: the one its transitions name, else the one of its resource. */
export async function selectPaymentOfEvent(
  db: SqlExecutor,
  event: { id: number; provider: string; resourceId: string | null },
): Promise<PaymentSummary | undefined> {
  const { rows } = await db.executeSql<PaymentRow>(
    `select ${PAYMENT_COLUMNS} from payments p
     where p.id = coalesce(
       (select payment_id from payment_transitions where inbox_id = $1 order by id limit 1),
       (select id from payments where provider = $2 and gateway_charge_id = $3))`,
    [event.id, event.provider, event.resourceId],
  );
  return rows[0] && toPayment(rows[0]);
}
