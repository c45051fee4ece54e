/**
 * What can go wrong re-reading a charge from a gateway's API, split by what should happen next:
 * retry later (unavailable), wait for the breaker (open), or ask a human (rejected). Each carries
 * a stable snake_case `code` for logs, metrics and the inbox row's last_error.
 */
export abstract class RefetchError extends Error {
  abstract readonly code: string;
  /** True when the same call can succeed later without anyone changing anything. */
  abstract readonly retryable: boolean;
  readonly provider: string;
  constructor(provider: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.provider = provider;
  }
}

/** 5xx, 429, 408, a timeout or a network failure: the gateway may answer later. */
export class GatewayUnavailableError extends RefetchError {
  readonly code = 'gateway_unavailable';
  readonly retryable = true;
  /** The HTTP status, when there was an answer at all. */
  readonly status: number | undefined;
  /** The gateway's Retry-After, when it sent one. */
  readonly retryAfterSeconds: number | undefined;
  constructor(provider: string, message: string, options: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(provider, message, { cause: options.cause });
    this.status = options.status;
    this.retryAfterSeconds = options.retryAfterSeconds;
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
