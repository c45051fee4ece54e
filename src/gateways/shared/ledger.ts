import { CodedError } from '../../errors.ts';
/**
 * A gateway's settlement ledger — what the money did, as opposed to what the webhooks said — read
 * page by page for `inboxctl reconcile`. Pure, like GatewayEventList: the caller sends the GETs
 * (through the refetch layer's rate limit and breaker) and hands the parsed answers back.
 */
export interface GatewayLedger {
  readonly gateway: string;
  /**
   * Days after a payment is paid by which its credit is expected in the ledger: past it, a paid
   * payment with no credit is a finding. INBOX_CONFIG's `reconcile.settlementDays` overrides it.
   */
  readonly defaultSettlementDays: number;
  /** The path (with query) of one page of the entries created in [since, until), after `cursor` (undefined: the first page). */
  entriesPath(window: LedgerWindow, cursor: string | undefined): string;
  /** The page's entries, each read or named as unreadable; `nextCursor` undefined on the last page. */
  readEntries(json: unknown): LedgerPage;
  /** Gateways that pay out in batches that list their entries (Stripe). */
  readonly payouts?: GatewayPayouts;
  /**
   * Gateways whose payment object says what will settle and when (Asaas `netValue`,
   * `estimatedCreditDate`): read for a paid payment whose credit the ledger lacks, before that is
   * called a finding.
   */
  readonly paymentSettlement?: GatewayPaymentSettlement;
}

export interface GatewayPaymentSettlement {
  /** The path of one payment, by the key the payments table holds it under. */
  paymentPath(paymentKey: string): string;
  readPayment(json: unknown): ExpectedSettlement;
}

/** What the gateway's payment object says of its settlement. */
export interface ExpectedSettlement {
  /** What it credits, net of fees, in minor units; undefined when it does not say. */
  netAmount: number | undefined;
  /** When it is to be credited; undefined when it does not say. */
  expectedCreditAt: Date | undefined;
  /** When it was credited, once it was. */
  creditedAt: Date | undefined;
}

export interface GatewayPayouts {
  /** The path of one payout. */
  payoutPath(payoutId: string): string;
  readPayout(json: unknown): LedgerPayout;
  /** The path of one page of the entries a payout paid out. */
  payoutEntriesPath(payoutId: string, cursor: string | undefined): string;
  /** The path of one page of the payouts created in [since, until). */
  payoutsPath(window: LedgerWindow, cursor: string | undefined): string;
  readPayouts(json: unknown): { payouts: LedgerPayout[]; nextCursor: string | undefined };
  /** Webhook event types after which a payout's entries are final and worth reading. */
  readonly settledEventTypes: readonly string[];
}

export interface LedgerWindow {
  since: Date;
  until: Date;
}

/**
 * What an entry means for a payment, whatever the gateway calls it: `charge` brings the payment's
 * money in, `refund` and `chargeback` take it out, `chargeback_reversal` brings a chargeback back,
 * `fee` is a fee of its own (Asaas books the fee as a separate line), `payout` moves money to the
 * bank, `other` is anything else (kept, shown, not matched to a payment).
 */
export const ledgerEntryKinds = ['charge', 'refund', 'chargeback', 'chargeback_reversal', 'fee', 'payout', 'other'] as const;
export type LedgerEntryKind = (typeof ledgerEntryKinds)[number];

/** One ledger entry in minor units exactly, the currency as the gateway wrote it. */
export interface LedgerEntry {
  /** The gateway's own id of the entry (txn_…, an Asaas statement id, a Pagar.me payable id). */
  entryId: string;
  kind: LedgerEntryKind;
  /** The gateway's own word for it (`charge`, `PAYMENT_RECEIVED`, `credit`). */
  gatewayType: string;
  /** The gateway charge it belongs to, when it names one. */
  chargeId: string | undefined;
  /**
   * The key the payments table holds the payment under, when the entry says (Stripe: the
   * PaymentIntent, else the charge). Undefined: matched by `chargeId` alone.
   */
  paymentKey: string | undefined;
  payoutId: string | undefined;
  /** Gross, signed as the gateway signs it: money in positive, money out negative. */
  amount: number;
  /** Fees charged on this entry, positive when charged. */
  fee: number;
  /** What it does to the balance: amount − fee. */
  net: number;
  /** As the gateway wrote it (Stripe: lower case). */
  currency: string;
  /** The gateway's status (pending/available, waiting_funds/paid, …); undefined when it has none. */
  status: string | undefined;
  /** When the money is (or was) available: Stripe available_on, Pagar.me payment_date, Asaas the statement date. */
  availableAt: Date | undefined;
  createdAt: Date;
  /** The entry as listed: the evidence a finding shows. */
  raw: Record<string, unknown>;
}

/** An entry the reader could not make sense of: a finding, never a crash. */
export interface UnreadableEntry {
  entryId: string | undefined;
  reason: string;
  raw: unknown;
}

export type LedgerRead = { ok: true; entry: LedgerEntry } | { ok: false; unreadable: UnreadableEntry };

export interface LedgerPage {
  entries: LedgerRead[];
  nextCursor: string | undefined;
}

export interface LedgerPayout {
  payoutId: string;
  /** Minor units, positive: what reached (or is to reach) the bank. */
  amount: number;
  currency: string;
  status: string;
  arrivalAt: Date | undefined;
  /** The payout's own entry in the ledger, left out when its entries are added up. */
  balanceEntryId: string | undefined;
  createdAt: Date;
  raw: Record<string, unknown>;
}

/** Thrown by a reader for an entry it cannot read: caught per entry and turned into an UnreadableEntry. */
export class LedgerEntryError extends CodedError {
  readonly code = 'ledger_entry_unreadable';
  constructor(reason: string) {
    super(reason);
  }
}

/** The longest id, type and status an entry may carry: what the ledger table holds (ids 150, types 60, statuses 30). */
export const LEDGER_TEXT_LIMITS = { id: 150, type: 60, status: 30 } as const;

/** Text PostgreSQL can store in a column of that width: no NUL, not longer. */
const storable = (value: string | undefined, max: number) => value === undefined || (value.length <= max && !value.includes('\0'));

/** An entry whose ids or words the ledger could not store is unreadable too, never a page that fails to commit. */
function checkStorable(entry: LedgerEntry): LedgerEntry {
  const { id, type, status } = LEDGER_TEXT_LIMITS;
  for (const [name, value] of [
    ['id', entry.entryId],
    ['charge id', entry.chargeId],
    ['payment key', entry.paymentKey],
    ['payout id', entry.payoutId],
  ] as const) {
    if (!storable(value, id)) throw new LedgerEntryError(`its ${name} is longer than ${id} characters or holds a NUL`);
  }
  if (!storable(entry.gatewayType, type)) throw new LedgerEntryError(`its type is longer than ${type} characters or holds a NUL`);
  if (!storable(entry.status, status)) throw new LedgerEntryError(`its status is longer than ${status} characters or holds a NUL`);
  return entry;
}

/** Reads one listed entry; anything wrong with it becomes an UnreadableEntry naming its id when it has one (and it could be stored). */
export function readEntrySafely(raw: unknown, read: (record: Record<string, unknown>) => LedgerEntry): LedgerRead {
  const record = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  const listedId = record && (typeof record.id === 'string' || typeof record.id === 'number') ? String(record.id) : undefined;
  const entryId = storable(listedId, LEDGER_TEXT_LIMITS.id) ? listedId : undefined;
  if (!record) return { ok: false, unreadable: { entryId, reason: 'the entry is not an object', raw } };
  try {
    return { ok: true, entry: checkStorable(read(record)) };
  } catch (error) {
    if (!(error instanceof LedgerEntryError)) throw error;
    return { ok: false, unreadable: { entryId, reason: error.message, raw } };
  }
}

export function entryText(record: Record<string, unknown>, key: string): string {
  const value = record[key];
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string' || value === '') throw new LedgerEntryError(`"${key}" is missing`);
  return value;
}

export function optionalText(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** An integer amount in minor units; anything else (a float, a string, missing) is unreadable, never 0. */
export function entryMinorUnits(record: Record<string, unknown>, key: string): number {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value))
    throw new LedgerEntryError(`"${key}" is ${value === undefined ? 'missing' : 'not an integer amount in minor units'}`);
  return value;
}

/** A time given as Unix seconds (Stripe). */
export function unixSeconds(record: Record<string, unknown>, key: string): Date {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new LedgerEntryError(`"${key}" is not a Unix time`);
  return new Date(value * 1000);
}

/** A time given as ISO 8601 text, or a calendar day (YYYY-MM-DD, read as that day at 00:00 in `offset`). */
export function isoTime(record: Record<string, unknown>, key: string, offset = 'Z'): Date {
  const value = record[key];
  const text = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00${offset}` : value;
  const time = typeof text === 'string' ? new Date(text) : undefined;
  if (!time || Number.isNaN(time.getTime())) throw new LedgerEntryError(`"${key}" is not a date`);
  return time;
}

/** The one currency code a reader accepts: three letters, kept as written. */
export function entryCurrency(value: unknown): string {
  if (typeof value !== 'string' || !/^[a-z]{3}$/i.test(value)) throw new LedgerEntryError('"currency" is not a three-letter code');
  return value;
}
