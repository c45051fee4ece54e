import type { PaymentStatus, SplitShare } from '../../domain/payments/payment-fact.ts';
import { decimalToMinorUnits } from './amounts.ts';
import { CodedError } from '../../errors.ts';

/**
 * A charge as the gateway's API says it is right now, in canonical terms. It is the gateway's
 * truth at `observedAt`: the payments fold resets the state to it instead of treating it as one
 * more transition (a webhook can be stale, the API cannot).
 */
export interface ChargeSnapshot {
  chargeId: string;
  status: PaymentStatus;
  /** Minor units; undefined when the gateway did not say. */
  amount: number | undefined;
  /** Minor units already returned to the payer (refunds, voids). */
  amountRefunded: number;
  /** ISO 4217, upper case; undefined when the gateway did not say. */
  currency: string | undefined;
  /**
   * Whether an inquiry is open (Stripe: the charge's newest dispute is a `warning_*` one; no money
   * moved). Absent when the gateway has no inquiries to tell of, or could not say.
   */
  inquiryOpen?: boolean;
  /** How the charge is divided between recipients (Pagar.me); absent when the gateway did not say. */
  split?: readonly SplitShare[];
  /**
   * When the request was sent, by our clock: everything that happened at the gateway before it
   * is in the answer. (The answer's own time would order an event that happened during the
   * request, and is missing from the answer, before the snapshot, where the reset would hide it.)
   */
  observedAt: Date;
}

/** What a gateway mapping returns; the refetcher adds `observedAt`. */
export type ChargeState = Omit<ChargeSnapshot, 'observedAt'>;

/**
 * An authenticated GET against the gateway's API: `path` (with its query) is relative to the
 * configured base URL; the answer is the parsed JSON of a 2xx. Every failure (timeouts, 4xx/5xx)
 * is thrown by the refetch layer; a mapping never sees one.
 */
export type GatewayGet = (path: string) => Promise<unknown>;

/**
 * Per-provider API settings a gateway may need besides the base URL and the key, by the names its
 * `requiredSettings` declares (Zoop: `marketplaceId`, every transaction URL is under
 * /v1/marketplaces/{marketplaceId}). Each is a non-empty text under `api` in INBOX_CONFIG.
 */
export type GatewaySettings = Readonly<Record<string, string | undefined>>;

/**
 * How to read one gateway's charge. Pure apart from the injected `get`: no clock, no sockets,
 * so every mapping is tested from recorded JSON.
 */
export interface GatewayApi {
  /** The gateway's name, equal to its webhook driver's name (`stripe`, `pagarme`, …). */
  readonly name: string;
  /** Production API origin; tests and sandboxes override it with `api.baseUrl`. */
  readonly defaultBaseUrl: string;
  /** Settings beyond the key that configuration must provide (Zoop: `marketplaceId`). */
  readonly requiredSettings: readonly string[];
  /** The headers that authenticate a request with this API key. */
  authHeaders(key: string): Record<string, string>;
  /**
   * The headers that make a request on behalf of one of the platform's accounts (Stripe Connect:
   * `Stripe-Account: acct_…`), for a provider declared `connect`. Absent: the gateway has no such
   * header, and an account's reads use the provider's key as they are.
   */
  accountHeaders?(account: string): Record<string, string>;
  readCharge(chargeId: string, get: GatewayGet, settings: GatewaySettings): Promise<ChargeState>;
}

/** The gateway answered 2xx with JSON that is not the resource this mapping knows. */
export class GatewayResponseShapeError extends CodedError {
  readonly code = 'gateway_response_unexpected';
  constructor(gateway: string, detail: string) {
    super(`The ${gateway} API answered with JSON this mapping does not understand (${detail}). Has the API version changed?`);
  }
}

export function basicAuthorization(username: string, password = ''): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/** Path segments from ids are always encoded: an id is data, never part of the route. */
export function pathSegment(id: string): string {
  return encodeURIComponent(id);
}

/** The refunded amount becomes a status: nothing refunded → paid, all of it → refunded. */
export function refundStatus(amount: number | undefined, amountRefunded: number): PaymentStatus {
  if (amountRefunded <= 0) return 'paid';
  if (amount !== undefined && amountRefunded < amount) return 'partially_refunded';
  return 'refunded';
}

export function asRecord(value: unknown, gateway: string, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayResponseShapeError(gateway, `${what} is not an object`);
  }
  return value as Record<string, unknown>;
}

export function requireString(record: Record<string, unknown>, key: string, gateway: string): string {
  const value = record[key];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string' || value.length === 0) throw new GatewayResponseShapeError(gateway, `"${key}" is missing`);
  return value;
}

/**
 * An amount the mapping cannot do without, in minor units: a missing or malformed one is a shape
 * error, never read as 0 (0 refunded would turn a refunded charge's snapshot into a paid one).
 */
export function requireMinorUnits(record: Record<string, unknown>, key: string, gateway: string): number {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new GatewayResponseShapeError(gateway, `"${key}" is ${value === undefined ? 'missing' : 'not an amount in minor units'}`);
  }
  return value;
}

/**
 * The same for a gateway that sends decimals in the currency unit (150.5, "29.90", 1500 CLP):
 * converted to the currency's minor units with string arithmetic (./amounts.ts); missing, not a
 * plain decimal, finer than the currency's minor unit or negative is a shape error.
 */
export function requireDecimalMinorUnits(record: Record<string, unknown>, key: string, gateway: string, currency: string | undefined): number {
  const value = record[key];
  const minor = decimalToMinorUnits(value, currency);
  if (minor === undefined || minor < 0) {
    throw new GatewayResponseShapeError(
      gateway,
      `"${key}" is ${value === undefined ? 'missing' : `not a decimal amount in ${currency ?? 'the currency'}'s minor units`}`,
    );
  }
  return minor;
}
