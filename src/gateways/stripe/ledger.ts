import { GatewayResponseShapeError, asRecord } from '../shared/gateway-api.ts';
import { stripeAmountInMinorUnits } from './amounts.ts';
import {
  type GatewayLedger,
  type LedgerEntry,
  type LedgerEntryKind,
  type LedgerPayout,
  type LedgerWindow,
  LedgerEntryError,
  entryCurrency,
  entryMinorUnits,
  entryText,
  optionalText,
  readEntrySafely,
  unixSeconds,
} from '../shared/ledger.ts';

const PAGE_SIZE = 100;

/**
 * Stripe's ledger is its balance transactions (API reference "Balance Transactions"; stripe-node
 * `BalanceTransaction`, `BalanceTransactionListParams`): `GET /v1/balance_transactions` by
 * `created[gte]`/`created[lt]` (Unix seconds) or by `payout`, newest first, `limit` ≤ 100,
 * `starting_after` = the last id of the page before, `has_more`. `amount`, `fee` and `net` are
 * integers on Stripe's scale (`net` = `amount` − `fee`; stored in ISO 4217 minor units, as the
 * payments are: only ISK and MGA differ), `currency` lower case,
 * `available_on` and `created` Unix seconds, `status` pending | available. `source` names the
 * charge, refund or dispute the entry came from; it is expanded (`expand[]=data.source`, the way
 * Stripe's payout-reconciliation guide lists them) so each entry names its charge and the
 * PaymentIntent the payments table keys the payment by, without one more call per entry.
 */
export const stripeLedger: GatewayLedger = {
  gateway: 'stripe',
  // A charge's balance transaction exists from the charge on (status pending until available_on):
  // a paid payment without one after two days is not a matter of timing.
  defaultSettlementDays: 2,
  entriesPath(window, cursor) {
    return listPath({ ...createdRange(window), limit: String(PAGE_SIZE), 'expand[]': 'data.source' }, cursor);
  },
  readEntries(json) {
    const page = readList(json, 'the balance transaction list');
    return { entries: page.data.map((raw) => readEntrySafely(raw, balanceTransaction)), nextCursor: page.nextCursor };
  },
  payouts: {
    payoutPath: (payoutId) => `/v1/payouts/${encodeURIComponent(payoutId)}`,
    readPayout: (json) => payout(asRecord(json, 'stripe', 'the payout')),
    payoutEntriesPath: (payoutId, cursor) => listPath({ payout: payoutId, limit: String(PAGE_SIZE), 'expand[]': 'data.source' }, cursor),
    payoutsPath: (window, cursor) => listPath({ ...createdRange(window), limit: String(PAGE_SIZE) }, cursor, '/v1/payouts'),
    readPayouts(json) {
      const page = readList(json, 'the payout list');
      return { payouts: page.data.map((raw) => payout(asRecord(raw, 'stripe', 'a payout in the list'))), nextCursor: page.nextCursor };
    },
    // payout.reconciliation_completed: the entries of an automatic payout are final (Stripe's
    // payout reconciliation guide); payout.paid and payout.failed: it reached the bank, or not.
    settledEventTypes: ['payout.paid', 'payout.failed', 'payout.reconciliation_completed'],
  },
};

function createdRange(window: LedgerWindow): Record<string, string> {
  return { 'created[gte]': String(Math.floor(window.since.getTime() / 1000)), 'created[lt]': String(Math.ceil(window.until.getTime() / 1000)) };
}

function listPath(params: Record<string, string>, cursor: string | undefined, path = '/v1/balance_transactions'): string {
  const query = new URLSearchParams(params);
  if (cursor !== undefined) query.set('starting_after', cursor);
  return `${path}?${query.toString()}`;
}

/** A Stripe list: `data` and `has_more`; the next page starts after the last id of this one. */
function readList(json: unknown, what: string): { data: unknown[]; nextCursor: string | undefined } {
  const page = asRecord(json, 'stripe', what);
  if (!Array.isArray(page.data) || typeof page.has_more !== 'boolean')
    throw new GatewayResponseShapeError('stripe', `${what} has no "data" array or no "has_more"`);
  const last = page.data.at(-1) as { id?: unknown } | undefined;
  if (page.has_more && typeof last?.id !== 'string') throw new GatewayResponseShapeError('stripe', `"has_more" is true but ${what} ends with no id`);
  return { data: page.data, nextCursor: page.has_more ? (last!.id as string) : undefined };
}

const kindByType: Readonly<Record<string, LedgerEntryKind>> = {
  charge: 'charge',
  payment: 'charge',
  refund: 'refund',
  payment_refund: 'refund',
  // A refund that failed puts the money back: a refund entry of the other sign.
  refund_failure: 'refund',
  payment_failure_refund: 'refund',
  payout: 'payout',
  payout_cancel: 'payout',
  payout_failure: 'payout',
  stripe_fee: 'fee',
  stripe_fx_fee: 'fee',
  tax_fee: 'fee',
  application_fee: 'fee',
};

/**
 * Disputes are `adjustment` entries (Stripe: "disputes are adjustments"); their
 * `reporting_category` says which way: `dispute` (funds withdrawn) or `dispute_reversal` (a won
 * dispute's funds returned). Any other adjustment is kept as `other`.
 */
function kindOf(type: string, reportingCategory: string | undefined): LedgerEntryKind {
  if (type === 'adjustment') {
    if (reportingCategory === 'dispute') return 'chargeback';
    if (reportingCategory === 'dispute_reversal') return 'chargeback_reversal';
    return 'other';
  }
  return kindByType[type] ?? 'other';
}

/** The charge and PaymentIntent the (expanded) source names; a source left as an id names a charge only when it is one. */
function sourceKeys(source: unknown): { sourceId: string | undefined; chargeId: string | undefined; paymentIntent: string | undefined } {
  if (typeof source === 'string') return { sourceId: source, chargeId: /^(ch|py)_/.test(source) ? source : undefined, paymentIntent: undefined };
  if (typeof source !== 'object' || source === null) return { sourceId: undefined, chargeId: undefined, paymentIntent: undefined };
  const object = source as Record<string, unknown>;
  const idOf = (value: unknown) =>
    typeof value === 'string' ? value : typeof value === 'object' && value !== null ? optionalText(value as Record<string, unknown>, 'id') : undefined;
  const sourceId = optionalText(object, 'id');
  // A charge names itself; a refund and a dispute name their charge.
  const chargeId = object.object === 'charge' ? sourceId : idOf(object.charge);
  return { sourceId, chargeId, paymentIntent: idOf(object.payment_intent) };
}

/**
 * An amount of the entry on Stripe's scale, in the currency's ISO 4217 minor units: the scale the
 * payments table holds (./amounts.ts; only ISK and MGA differ). A fractional króna is unreadable.
 */
function isoMinorUnits(record: Record<string, unknown>, key: string, currency: string): number {
  const amount = stripeAmountInMinorUnits(entryMinorUnits(record, key), currency.toUpperCase());
  if (amount === undefined) throw new LedgerEntryError(`"${key}" is not a whole amount in ${currency.toUpperCase()}'s ISO 4217 minor units`);
  return amount;
}

function balanceTransaction(record: Record<string, unknown>): LedgerEntry {
  if (record.object !== undefined && record.object !== 'balance_transaction')
    throw new LedgerEntryError(`"object" is ${JSON.stringify(record.object)}, not balance_transaction`);
  const type = entryText(record, 'type');
  const currency = entryCurrency(record.currency);
  const amount = isoMinorUnits(record, 'amount', currency);
  const fee = isoMinorUnits(record, 'fee', currency);
  const net = isoMinorUnits(record, 'net', currency);
  if (net !== amount - fee) throw new LedgerEntryError(`"net" (${net}) is not "amount" − "fee" (${amount} − ${fee})`);
  const { sourceId, chargeId, paymentIntent } = sourceKeys(record.source);
  const kind = kindOf(type, optionalText(record, 'reporting_category'));
  return {
    entryId: entryText(record, 'id'),
    kind,
    gatewayType: type,
    chargeId,
    paymentKey: paymentIntent ?? chargeId,
    payoutId: undefined,
    amount,
    fee,
    net,
    currency,
    status: optionalText(record, 'status'),
    availableAt: record.available_on === undefined || record.available_on === null ? undefined : unixSeconds(record, 'available_on'),
    createdAt: unixSeconds(record, 'created'),
    // The expanded source is a whole charge: kept as its id, so the evidence stays the entry.
    raw: { ...record, source: sourceId ?? null },
  };
}

function payout(record: Record<string, unknown>): LedgerPayout {
  const id = typeof record.id === 'string' ? record.id : undefined;
  const amount = record.amount;
  if (id === undefined || typeof amount !== 'number' || !Number.isSafeInteger(amount) || typeof record.currency !== 'string') {
    throw new GatewayResponseShapeError('stripe', 'a payout has no "id", integer "amount" or "currency"');
  }
  const balance = record.balance_transaction;
  // On the scale of its entries (ISO 4217 minor units), so the two add up.
  const isoAmount = stripeAmountInMinorUnits(amount, record.currency.toUpperCase());
  if (isoAmount === undefined)
    throw new GatewayResponseShapeError('stripe', `the payout's "amount" is not a whole amount in ${record.currency.toUpperCase()}'s ISO 4217 minor units`);
  return {
    payoutId: id,
    amount: isoAmount,
    currency: record.currency,
    status: typeof record.status === 'string' ? record.status : 'unknown',
    arrivalAt: typeof record.arrival_date === 'number' ? new Date(record.arrival_date * 1000) : undefined,
    balanceEntryId:
      typeof balance === 'string'
        ? balance
        : typeof balance === 'object' && balance !== null
          ? optionalText(balance as Record<string, unknown>, 'id')
          : undefined,
    createdAt: typeof record.created === 'number' ? new Date(record.created * 1000) : new Date(0),
    raw: record,
  };
}
