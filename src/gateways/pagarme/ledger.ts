import { GatewayResponseShapeError, asRecord } from '../shared/gateway-api.ts';
import {
  type GatewayLedger,
  type LedgerEntry,
  type LedgerEntryKind,
  LedgerEntryError,
  entryMinorUnits,
  entryText,
  isoTime,
  optionalText,
  readEntrySafely,
} from '../shared/ledger.ts';

const PAGE_SIZE = 100;

const kindByType: Readonly<Record<string, LedgerEntryKind>> = {
  credit: 'charge',
  refund: 'refund',
  // A boleto refund undone: money back in.
  refund_reversal: 'refund',
  chargeback: 'chargeback',
  // A chargeback whose representment was won.
  chargeback_refund: 'chargeback_reversal',
};

/** Money out for these, whatever sign the payable carries (the docs give the effect on the balance, not the sign of `amount`). */
const outgoing = new Set(['refund', 'chargeback']);

/**
 * Pagar.me Core API v5's ledger is its payables ("recebíveis"): one per installment and recipient
 * (docs.pagar.me "Recebíveis"; pagarme-nodejs-sdk PayablesController.getPayables and
 * GetPayableResponse): `GET /core/v5/payables` filtered by `created_since`/`created_until`,
 * paged by `page` and `size`, answering `{ data: [payable…], paging: { total, previous, next } }`.
 * A payable has `id`, `type` (credit, refund, refund_reversal, chargeback, chargeback_refund),
 * `status` (waiting_funds, prepaid, paid), `amount`, `fee`, `anticipation_fee` and
 * `fraud_coverage_fee` in integer centavos, `charge_id`, `payment_date` (when it is or was paid
 * to the recipient) and `created_at`. Pagar.me is reais only: the payable names no currency.
 *
 * UNVERIFIED: the SDK's newest release (7.x) drops `page` for a forward cursor
 * (`paging.forward_cursor`) whose query parameter it does not name; this reader pages by `page`
 * and stops when `paging.next` is null or the page is short. Also unverified: whether a refund
 * payable's `amount` is negative or positive; both are read as money out.
 */
export const pagarmeLedger: GatewayLedger = {
  gateway: 'pagarme',
  // A payable is created with its charge (waiting_funds), so it is listed at once.
  defaultSettlementDays: 2,
  entriesPath(window, cursor) {
    const query = new URLSearchParams({
      created_since: window.since.toISOString(),
      created_until: window.until.toISOString(),
      page: cursor ?? '1',
      size: String(PAGE_SIZE),
    });
    return `/core/v5/payables?${query.toString()}`;
  },
  readEntries(json) {
    const page = asRecord(json, 'pagarme', 'the payable list');
    if (!Array.isArray(page.data)) throw new GatewayResponseShapeError('pagarme', 'the payable list has no "data" array');
    const paging = typeof page.paging === 'object' && page.paging !== null ? (page.paging as Record<string, unknown>) : {};
    const hasNext = typeof paging.next === 'string' && paging.next !== '' && page.data.length >= PAGE_SIZE;
    return {
      entries: page.data.map((raw) => readEntrySafely(raw, payable)),
      nextCursor: hasNext ? String(pageNumberOf(paging.next as string) ?? 0) : undefined,
    };
  },
};

/** The page the `next` link asks for. */
function pageNumberOf(link: string): number | undefined {
  const page = Number(new URL(link, 'http://pagar.me').searchParams.get('page'));
  return Number.isSafeInteger(page) && page > 0 ? page : undefined;
}

function optionalCents(record: Record<string, unknown>, key: string): number {
  return record[key] === undefined || record[key] === null ? 0 : entryMinorUnits(record, key);
}

function payable(record: Record<string, unknown>): LedgerEntry {
  const type = entryText(record, 'type');
  const listed = entryMinorUnits(record, 'amount');
  const amount = outgoing.has(type) ? -Math.abs(listed) : listed;
  const fee = optionalCents(record, 'fee') + optionalCents(record, 'anticipation_fee') + optionalCents(record, 'fraud_coverage_fee');
  const chargeId = optionalText(record, 'charge_id');
  if (type === 'credit' && chargeId === undefined) throw new LedgerEntryError('a credit payable names no "charge_id"');
  return {
    entryId: entryText(record, 'id'),
    kind: kindByType[type] ?? 'other',
    gatewayType: type,
    chargeId,
    paymentKey: undefined,
    payoutId: undefined,
    amount,
    fee,
    net: amount - fee,
    currency: 'BRL',
    status: optionalText(record, 'status'),
    availableAt: record.payment_date === undefined || record.payment_date === null ? undefined : isoTime(record, 'payment_date'),
    createdAt: isoTime(record, 'created_at'),
    raw: record,
  };
}
