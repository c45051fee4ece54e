import { decimalToMinorUnits } from '../shared/amounts.ts';
import { nextOffset } from '../shared/event-list.ts';
import { GatewayResponseShapeError, asRecord, pathSegment } from '../shared/gateway-api.ts';
import {
  type ExpectedSettlement,
  type GatewayLedger,
  type LedgerEntry,
  type LedgerEntryKind,
  LedgerEntryError,
  entryText,
  isoTime,
  optionalText,
  readEntrySafely,
} from '../shared/ledger.ts';

const PAGE_SIZE = 100;
/** Asaas dates are São Paulo calendar days (UTC−3, no daylight saving since 2019). */
const SAO_PAULO = '-03:00';
const saoPauloDay = (time: Date) => new Date(time.getTime() - 3 * 3_600_000).toISOString().slice(0, 10);

/**
 * Asaas statement line types (docs.asaas.com "Recuperar extrato"; the type list as the Java
 * clients of the API enumerate it — UNVERIFIED against an official enum, none is published):
 * PAYMENT_RECEIVED "Cobrança recebida", PAYMENT_FEE "Taxa da cobrança" (a line of its own, negative),
 * PAYMENT_FEE_REVERSAL, PAYMENT_REVERSAL "Estorno da cobrança" (a refund), PAYMENT_REFUND_CANCELLED,
 * CHARGEBACK "Bloqueio de saldo devido ao chargeback", CHARGEBACK_REVERSAL, TRANSFER (to the
 * bank) and TRANSFER_FEE. Every other type (notification fees, anticipation, Pix sent, …) is kept
 * as `other`.
 */
const kindByType: Readonly<Record<string, LedgerEntryKind>> = {
  PAYMENT_RECEIVED: 'charge',
  PAYMENT_FEE: 'fee',
  PAYMENT_FEE_REVERSAL: 'fee',
  PAYMENT_REVERSAL: 'refund',
  PAYMENT_REFUND_CANCELLED: 'refund',
  REFUND_REQUEST_CANCELLED: 'refund',
  CHARGEBACK: 'chargeback',
  CHARGEBACK_REVERSAL: 'chargeback_reversal',
  TRANSFER: 'payout',
  TRANSFER_FEE: 'fee',
};

/**
 * Asaas's ledger is its statement ("extrato"): `GET /v3/financialTransactions` with `startDate`
 * and `finishDate` (São Paulo days, both included), `offset`/`limit` (≤ 100) and `order=asc`,
 * answering `{ hasMore, totalCount, limit, offset, data: [{ id, value, balance, type, date,
 * description, paymentId, … }] }`. `value` is a signed decimal in reais (BRL: the statement names
 * no currency, an Asaas account holds reais only); the fee of a payment is a line of its own
 * (PAYMENT_FEE, naming the same `paymentId`), so a received line has fee 0.
 *
 * Card purchases: the note that "card purchases do not appear in the statement" is about
 * purchases made *with the account's own Asaas card* (docs.asaas.com community: only the card
 * bill payment, ASAAS_CARD_BILL_PAYMENT, is listed) — not card payments received. A card payment
 * received is credited per installment on its `creditDate` (D+30 for one installment), and its
 * PAYMENT_RECEIVED line appears then: the default settlement delay here covers that wait. Until
 * then the payment object's own `netValue` and `estimatedCreditDate` are what Asaas says will
 * settle; UNVERIFIED: whether an anticipated installment shows as PAYMENT_RECEIVED or only as
 * RECEIVABLE_ANTICIPATION_* lines (kept as `other` here, so such a payment is reported as not credited).
 */
export const asaasLedger: GatewayLedger = {
  gateway: 'asaas',
  // A card payment is credited 30 days after it is paid (one installment); weekends and holidays add a few.
  defaultSettlementDays: 35,
  entriesPath(window, cursor) {
    const query = new URLSearchParams({
      startDate: saoPauloDay(window.since),
      finishDate: saoPauloDay(window.until),
      offset: cursor ?? '0',
      limit: String(PAGE_SIZE),
      order: 'asc',
    });
    return `/v3/financialTransactions?${query.toString()}`;
  },
  readEntries(json) {
    const page = asRecord(json, 'asaas', 'the statement');
    if (!Array.isArray(page.data) || typeof page.hasMore !== 'boolean' || typeof page.offset !== 'number') {
      throw new GatewayResponseShapeError('asaas', 'the statement has no "data" array, "hasMore" or "offset"');
    }
    return { entries: page.data.map((raw) => readEntrySafely(raw, statementLine)), nextCursor: nextOffset(page.offset, page.data.length, page.hasMore) };
  },
  // A card payment is credited on its creditDate, which the payment object says before the day.
  paymentSettlement: {
    paymentPath: (paymentKey) => `/v3/payments/${pathSegment(paymentKey)}`,
    readPayment: expectedSettlement,
  },
};

/** A São Paulo day of the payment object, when it has one that reads as a date. */
function optionalDay(payment: Record<string, unknown>, key: string): Date | undefined {
  if (typeof payment[key] !== 'string') return undefined;
  try {
    return isoTime(payment, key, SAO_PAULO);
  } catch {
    return undefined;
  }
}

/** `GET /v3/payments/{id}`: `netValue` (reais), `estimatedCreditDate` and, once credited, `creditDate`. */
function expectedSettlement(json: unknown): ExpectedSettlement {
  const payment = asRecord(json, 'asaas', 'the payment');
  return {
    netAmount: decimalToMinorUnits(payment.netValue, 'BRL'),
    expectedCreditAt: optionalDay(payment, 'estimatedCreditDate'),
    creditedAt: optionalDay(payment, 'creditDate'),
  };
}

function statementLine(record: Record<string, unknown>): LedgerEntry {
  const type = entryText(record, 'type');
  const value = decimalToMinorUnits(record.value, 'BRL');
  if (value === undefined) throw new LedgerEntryError(`"value" is ${record.value === undefined ? 'missing' : 'not a decimal amount in reais'}`);
  const date = isoTime(record, 'date', SAO_PAULO);
  const paymentId = optionalText(record, 'paymentId');
  return {
    entryId: entryText(record, 'id'),
    kind: kindByType[type] ?? 'other',
    gatewayType: type,
    chargeId: paymentId,
    paymentKey: undefined,
    payoutId: type === 'TRANSFER' ? optionalText(record, 'transferId') : undefined,
    amount: value,
    fee: 0,
    net: value,
    currency: 'BRL',
    status: undefined,
    availableAt: date,
    createdAt: date,
    raw: record,
  };
}
