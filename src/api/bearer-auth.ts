import type { MiddlewareHandler } from 'hono';
import { equalSecrets } from '../web/equal-secrets.ts';
import type { RequestEnv } from '../web/request-env.ts';

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;

/**
 * `Authorization: Bearer <INBOX_API_TOKEN>` or 401 with `WWW-Authenticate: Bearer` (RFC 6750),
 * before any /api/v1 route runs. The compare takes the same time whatever the candidate
 * (equalSecrets hashes both sides first), and nothing of the candidate is logged or echoed.
 */
export function createBearerAuth(token: string): MiddlewareHandler<RequestEnv> {
  return async function bearerAuth(c, next) {
    const candidate = BEARER.exec(c.req.header('authorization') ?? '')?.[1];
    if (candidate !== undefined && equalSecrets(candidate, token)) return next();
    const code = candidate === undefined ? 'token_missing' : 'token_invalid';
    c.get('logger').info({ path: c.req.path, code }, 'refused an API request without the INBOX_API_TOKEN bearer token');
    c.header('WWW-Authenticate', candidate === undefined ? 'Bearer realm="webhook-inbox"' : 'Bearer realm="webhook-inbox", error="invalid_token"');
    const message =
      candidate === undefined
        ? 'Send the API token as `Authorization: Bearer <INBOX_API_TOKEN>`.'
        : 'The bearer token is not this service\'s INBOX_API_TOKEN.';
    return c.json({ error: { code, message } }, 401);
  };
}
