/**
 * The names an operator surface (the dashboard, the operator API) answers to. DNS rebinding points
 * a name the attacker controls at this service's address, which makes the attacker's page
 * same-origin with it in an operator's browser; the browser still sends that name in `Host`, which
 * no page can change, so `Host` is what is checked. Loopback names are always allowed: only
 * software on the operator's own machine can make a browser send them (an SSH tunnel, a
 * `kubectl port-forward`), on whatever port it listens.
 */
export interface AllowedHosts {
  /** Whether a request's `Host` header names this service. */
  allowsHost(host: string | undefined): boolean;
  /**
   * Whether a browser's `Origin` is this service's own: INBOX_PUBLIC_URL's origin exactly, or the
   * request's own (allowed) host — never a name only some other header vouches for.
   */
  allowsOrigin(origin: string, requestHost: string | undefined): boolean;
}

export interface AllowedHostsOptions {
  /** INBOX_PUBLIC_URL's origin (`https://ops.example.com:8443`): its host and port exactly. */
  publicOrigin?: string;
  /** INBOX_ALLOWED_HOSTS entries: `name` (any port) or `name:port` (that port only). */
  hosts?: readonly string[];
}

export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

interface HostPattern {
  name: string;
  /** `any`, or the exact port `Host` must carry (`undefined`: none, the scheme's default). */
  port: string | undefined | 'any';
}

// A DNS name, an IPv4 address or a bracketed IPv6 address, then an optional port: nothing that a
// URL parser could read as userinfo or a path (`attacker.example@localhost`).
const HOST_PATTERN = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/;

/** `Host: Inbox:3000` → `{ name: 'inbox', port: '3000' }`; undefined for anything else. */
export function parseHost(value: string): { name: string; port: string | undefined } | undefined {
  const match = HOST_PATTERN.exec(value.toLowerCase());
  return match ? { name: match[1]!, port: match[2] } : undefined;
}

function patternsOf(options: AllowedHostsOptions): HostPattern[] {
  const patterns: HostPattern[] = LOOPBACK_NAMES.map((name) => ({ name, port: 'any' }));
  if (options.publicOrigin !== undefined) {
    const url = new URL(options.publicOrigin);
    patterns.push({ name: url.hostname, port: url.port === '' ? undefined : url.port });
  }
  for (const entry of options.hosts ?? []) {
    const host = parseHost(entry);
    if (!host) throw new Error(`"${entry}" is not a host name or host:port`);
    patterns.push({ name: host.name, port: host.port ?? 'any' });
  }
  return patterns;
}

export function createAllowedHosts(options: AllowedHostsOptions = {}): AllowedHosts {
  const patterns = patternsOf(options);
  const publicOrigin = options.publicOrigin === undefined ? undefined : new URL(options.publicOrigin).origin;
  const allowsHost = (value: string | undefined) => {
    const host = value === undefined ? undefined : parseHost(value);
    return host !== undefined && patterns.some((p) => p.name === host.name && (p.port === 'any' || p.port === host.port));
  };
  return {
    allowsHost,
    allowsOrigin(origin, requestHost) {
      let url: URL;
      try {
        url = new URL(origin);
      } catch {
        return false; // `null` (sandboxed frames, file: pages) and garbage
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
      if (url.origin === publicOrigin) return true;
      return requestHost !== undefined && allowsHost(requestHost) && url.host === requestHost.toLowerCase();
    },
  };
}
