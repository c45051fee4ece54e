import type { MiddlewareHandler } from 'hono';
import type { AllowedHosts } from '../web/allowed-hosts.ts';
import type { AppEnv } from './env.ts';

export interface HostGuardOptions {
  allowedHosts: AllowedHosts;
}

/**
 * Answers 421 Misdirected Request, before any route runs, to a request whose `Host` is not one of
 * the service's own names (allowed-hosts.ts says why). For operator surfaces only: gateways,
 * load balancers and scrapers reach /webhooks, /metrics and the health checks by any name.
 */
export function createHostGuard(options: HostGuardOptions): MiddlewareHandler<AppEnv> {
  return async function hostGuard(c, next) {
    const host = c.req.header('host');
    if (options.allowedHosts.allowsHost(host)) return next();
    c.get('logger').warn({ host: host?.slice(0, 100), path: c.req.path }, 'refused a request for a host name not in INBOX_PUBLIC_URL / INBOX_ALLOWED_HOSTS');
    // The host is not echoed: the body is the same for every refused name.
    return c.json(
      {
        error: {
          code: 'misdirected_request',
          message: 'This service does not answer to that host name here. Use the URL in INBOX_PUBLIC_URL or a name in INBOX_ALLOWED_HOSTS.',
        },
      },
      421,
    );
  };
}
