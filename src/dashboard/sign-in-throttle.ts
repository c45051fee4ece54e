/**
 * Failed dashboard sign-ins per client: after `maxFailures` wrong tokens within a window that
 * opens at the client's first failure, every sign-in from that client is refused — the right
 * token too, or a throttled client could still learn which of its guesses was right — until the
 * window closes. In memory, per instance: several instances each give a client its own budget.
 *
 * Memory is bounded by `maxClients` windows. Windows are kept in the order they opened, so when the
 * table is full the oldest (the likeliest to have closed) is forgotten first; an attacker with
 * more addresses than that only resets budgets it already has one per address.
 */
export interface SignInThrottle {
  /** Seconds until `client` may try again (at least 1); undefined while it may. */
  retryAfterSeconds(client: string): number | undefined;
  /** Counts a wrong token; true when this one used up the client's budget. */
  recordFailure(client: string): boolean;
  /** A right token clears the client's failures. */
  recordSuccess(client: string): void;
  trackedClients(): number;
}

export interface SignInThrottleOptions {
  maxFailures: number;
  windowSeconds: number;
  maxClients: number;
  clock: () => Date;
}

export const SIGN_IN_MAX_FAILURES = 10;
export const SIGN_IN_WINDOW_SECONDS = 60;
export const SIGN_IN_MAX_CLIENTS = 10_000;

interface FailureWindow {
  openedAtMs: number;
  failures: number;
}

export function createSignInThrottle(options: SignInThrottleOptions): SignInThrottle {
  const windowMs = options.windowSeconds * 1000;
  const windows = new Map<string, FailureWindow>();
  const openWindow = (client: string, nowMs: number) => {
    const window = windows.get(client);
    if (window && nowMs - window.openedAtMs < windowMs) return window;
    windows.delete(client);
    return undefined;
  };
  return {
    retryAfterSeconds(client) {
      const nowMs = options.clock().getTime();
      const window = openWindow(client, nowMs);
      if (!window || window.failures < options.maxFailures) return undefined;
      return Math.max(1, Math.ceil((window.openedAtMs + windowMs - nowMs) / 1000));
    },
    recordFailure(client) {
      const nowMs = options.clock().getTime();
      let window = openWindow(client, nowMs);
      if (!window) {
        if (windows.size >= options.maxClients) windows.delete(windows.keys().next().value!);
        window = { openedAtMs: nowMs, failures: 0 };
        windows.set(client, window);
      }
      window.failures += 1;
      return window.failures === options.maxFailures;
    },
    recordSuccess: (client) => void windows.delete(client),
    trackedClients: () => windows.size,
  };
}

/**
 * The throttle's key for a remote address. One host usually holds a whole IPv6 /64 (SLAAC, privacy
 * addresses), so an IPv6 client is its /64; IPv4-mapped addresses count as the IPv4 client.
 */
export function clientKeyOf(address: string | undefined): string {
  if (!address) return 'unknown';
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return mapped[1]!;
  if (!lower.includes(':')) return lower;
  const [head = '', tail] = lower.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
