import { backoffSeconds } from '../backoff.ts';
import { CodedError } from '../../errors.ts';

/** The broker is not reachable now: the last connection attempt's error, and when the next may be made. */
export class BrokerUnreachableError extends CodedError {
  readonly code = 'broker_unreachable';
  constructor(message: string) {
    super(message);
  }
}

export interface ReconnectGateOptions<T> {
  connect: () => Promise<T>;
  /** performance.now(), injected. */
  now: () => number;
  /** The first wait after a failed attempt; each further failure doubles it (with jitter), up to maxDelaySeconds. */
  delaySeconds?: number;
  maxDelaySeconds?: number;
}

export interface ReconnectGate<T> {
  /** The connection being made, or a new attempt; fails at once while the last attempt's backoff lasts. */
  open(): Promise<T>;
}

/**
 * One connection attempt at a time per destination, and after a failed one none before a backoff.
 * The lanes that find the broker down at the same moment (up to a batch of them per delivery loop)
 * share one attempt and its error instead of each opening a socket; while the backoff lasts they
 * fail at once with that error, and their failures make the destination back off as a whole, as
 * a refused HTTP connection does. A lost connection reconnects at the next send, at once: a success
 * resets the backoff.
 */
export function createReconnectGate<T>(options: ReconnectGateOptions<T>): ReconnectGate<T> {
  const settings = { retryDelaySeconds: options.delaySeconds ?? 0.5, retryDelayMaxSeconds: options.maxDelaySeconds ?? 15 };
  let attempt: Promise<T> | undefined;
  let failures = 0;
  let retryAt = -Infinity;
  let lastError = '';
  const connect = async (): Promise<T> => {
    try {
      const connection = await options.connect();
      failures = 0;
      return connection;
    } catch (error) {
      failures += 1;
      retryAt = options.now() + backoffSeconds(failures, settings) * 1000;
      lastError = error instanceof Error ? error.message : String(error);
      throw new BrokerUnreachableError(`connection failed: ${lastError}`);
    }
  };
  return {
    open() {
      if (attempt) return attempt;
      const waitMs = retryAt - options.now();
      if (failures > 0 && waitMs > 0) {
        return Promise.reject(new BrokerUnreachableError(`connection failed: ${lastError} (next attempt in ${Math.ceil(waitMs / 100) / 10} s)`));
      }
      // Cleared once settled (always after this assignment: a callback never runs synchronously).
      const current = connect().finally(() => {
        if (attempt === current) attempt = undefined;
      });
      attempt = current;
      return current;
    },
  };
}
