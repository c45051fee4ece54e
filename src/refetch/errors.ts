import { CodedError } from '../errors.ts';

/**
 * What can go wrong re-reading a charge from a gateway's API, split by what should happen next:
 * retry later (unavailable), wait for the time the gateway named (Retry-After) or for the breaker
 * (open), or ask a human (rejected). Each carries
 * a stable snake_case `code` for logs, metrics and the inbox row's last_error.
 */
export abstract class RefetchError extends CodedError {
  /** True when the same call can succeed later without anyone changing anything. */
  abstract readonly retryable: boolean;
  readonly provider: string;
  constructor(provider: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.provider = provider;
  }
}

/** 5xx, 429, 408, a timeout or a network failure: the gateway may answer later. */
export class GatewayUnavailableError extends RefetchError {
  readonly code = 'gateway_unavailable';
  readonly retryable = true;
  /** The HTTP status, when there was an answer at all. */
  readonly status: number | undefined;
  constructor(provider: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(provider, message, { cause: options.cause });
    this.status = options.status;
  }
}

/**
 * The gateway said when to ask again (Retry-After on a 429 or a 503): no call to its API is sent
 * before `retryAt`. `status` is the answer that said so; undefined when this call was held back
 * because an earlier answer did. Nothing is wrong with the event: it waits, like for an open breaker.
 */
export class GatewayRetryAfterError extends RefetchError {
  readonly code = 'gateway_retry_after';
  readonly retryable = true;
  readonly status: number | undefined;
  readonly retryAt: Date;
  /** The wait the answer asked for, before any cap; undefined for a call held back by an earlier answer. */
  readonly requestedSeconds: number | undefined;
  /** The answer's body as messages may quote it (one line, bounded, the API key masked); undefined for a call held back. */
  readonly answer: string | undefined;
  constructor(provider: string, message: string, options: { retryAt: Date; requestedSeconds?: number; status?: number; answer?: string; cause?: unknown }) {
    super(provider, message, { cause: options.cause });
    this.status = options.status;
    this.retryAt = options.retryAt;
    this.requestedSeconds = options.requestedSeconds;
    this.answer = options.answer;
  }
}

/**
 * The circuit breaker is open: recent calls failed, so none is sent until `halfOpensAt`, when
 * one trial call decides whether the gateway is back. Nothing is wrong with the event itself.
 */
export class BreakerOpenError extends RefetchError {
  readonly code = 'gateway_breaker_open';
  readonly retryable = true;
  readonly halfOpensAt: Date;
  constructor(provider: string, halfOpensAt: Date) {
    super(
      provider,
      `The ${provider} API circuit breaker is open after repeated failures; no call is sent before ${halfOpensAt.toISOString()}, when one trial call decides whether it closes.`,
    );
    this.halfOpensAt = halfOpensAt;
  }
}

/**
 * 401/403/404, another 4xx, a redirect or an answer that is not the expected JSON: retrying the
 * same call will not help. Credentials, the base URL or the account (test vs live) need a look.
 */
export class GatewayRejectedError extends RefetchError {
  readonly code = 'gateway_rejected';
  readonly retryable = false;
  readonly status: number | undefined;
  constructor(provider: string, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(provider, message, { cause: options.cause });
    this.status = options.status;
  }
}

/**
 * The platform may no longer read this account at the gateway (Stripe Connect:
 * `account.application.deauthorized`, kept in gateway_account_access): no call was sent. Not
 * retried: the event is folded from its payload instead, and reads resume if the gateway says the
 * account is authorized again.
 */
export class AccountDeauthorizedError extends RefetchError {
  readonly code = 'gateway_account_deauthorized';
  readonly retryable = false;
  readonly account: string;
  constructor(provider: string, account: string) {
    super(
      provider,
      `The ${provider} account ${account} deauthorized this platform (account.application.deauthorized): no call to its API is made on its behalf.`,
    );
    this.account = account;
  }
}

/**
 * An event names an account of the provider that has no API key configured (an Asaas subaccount
 * removed from INBOX_CONFIG `accounts` while its events were kept): its charge is not readable with
 * the provider's own key, and none is sent. Configuration needs a look.
 */
export class UnknownAccountError extends RefetchError {
  readonly code = 'gateway_account_unknown';
  readonly retryable = false;
  readonly account: string;
  constructor(provider: string, account: string) {
    super(
      provider,
      `Provider "${provider}" has no API key for account "${account}" (INBOX_CONFIG accounts[].apiKey); its charges are only readable with that account's own key, so none was read.`,
    );
    this.account = account;
  }
}

/**
 * When a call that failed this way may be made again, if the failure says (an open breaker's
 * half-open time, a gateway's Retry-After): the event waits for it instead of spending an attempt.
 * Undefined: the normal retry schedule applies.
 */
export function retryNotBefore(error: unknown): Date | undefined {
  if (error instanceof BreakerOpenError) return error.halfOpensAt;
  if (error instanceof GatewayRetryAfterError) return error.retryAt;
  return undefined;
}
