import type { MiddlewareHandler } from 'hono';
import { equalSecrets } from '../web/equal-secrets.ts';
import type { RequestEnv } from '../web/request-env.ts';

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;

type Refusal = 'token_missing' | 'token_invalid' | 'token_ambiguous';

const REFUSALS: Record<Refusal, { challenge: string; message: string }> = {
  token_missing: { challenge: 'Bearer realm="webhook-inbox"', message: 'Send the API token as `Authorization: Bearer <INBOX_API_TOKEN>`.' },
  token_invalid: { challenge: 'Bearer realm="webhook-inbox", error="invalid_token"', message: "The bearer token is not this service's INBOX_API_TOKEN." },
  token_ambiguous: {
    challenge: 'Bearer realm="webhook-inbox", error="invalid_request"',
    message:
      'The request carries more than one credential (two Authorization headers, or a list in one): send exactly one `Authorization: Bearer <INBOX_API_TOKEN>`.',
  },
};

/**
 * Why a request is refused, or undefined when it carries the token. Two Authorization headers
 * reach us joined by a comma, which no token contains (config/api-config.ts): such a request is
 * refused whatever they hold, rather than one of them being picked.
 */
function refusalOf(authorization: string | undefined, token: string): Refusal | undefined {
  if (authorization === undefined) return 'token_missing';
  if (authorization.includes(',')) return 'token_ambiguous';
  const candidate = BEARER.exec(authorization)?.[1];
  if (candidate === undefined) return 'token_missing';
  return equalSecrets(candidate, token) ? undefined : 'token_invalid';
}

/**
 * `Authorization: Bearer <INBOX_API_TOKEN>` or 401 with `WWW-Authenticate: Bearer` (RFC 6750),
 * before any /api/v1 route runs. The compare takes the same time whatever the candidate
 * (equalSecrets hashes both sides first), and nothing of the candidate is logged or echoed.
 */
export function createBearerAuth(token: string): MiddlewareHandler<RequestEnv> {
  return async function bearerAuth(c, next) {
    const code = refusalOf(c.req.header('authorization'), token);
    if (code === undefined) return next();
    c.get('logger').info({ path: c.req.path, code }, 'refused an API request without the INBOX_API_TOKEN bearer token');
    c.header('WWW-Authenticate', REFUSALS[code].challenge);
    return c.json({ error: { code, message: REFUSALS[code].message } }, 401);
  };
}
