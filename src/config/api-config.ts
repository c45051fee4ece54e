import { z } from 'zod';

export interface ApiConfig {
  /**
   * INBOX_API_TOKEN: what `Authorization: Bearer …` must carry for /api/v1 (the payment-events
   * feed, the payments lookup). Unset: the API is off and /api/v1/* is a plain 404.
   */
  token: string | undefined;
}

/** The API's variables, spread into config.ts's one env schema. */
export const apiEnvKeys = {
  // 32 characters: a bearer token is the whole credential, sent on every request; `openssl rand
  // -hex 32` gives 64. Shorter is refused, not warned about: an application can guess nothing.
  // The characters of RFC 6750's b64token, what bearer-auth.ts reads from the header: a token with
  // any other (a space, `!`, `&`) could never be sent, so every request would get 401 token_missing.
  INBOX_API_TOKEN: z
    .string()
    .min(32, 'must be at least 32 characters (e.g. `openssl rand -hex 32`); unset it to turn the API off')
    .regex(
      /^[A-Za-z0-9._~+/-]+=*$/,
      'may hold only letters, digits and - . _ ~ + / (then = at the end), what an `Authorization: Bearer` header carries (e.g. `openssl rand -hex 32`)',
    )
    .optional()
    .describe(
      'At least 32 characters, of letters, digits and `-._~+/` (`=` only at the end): what a bearer header carries. Turns on `/api/v1` (the payment-events feed and the payments lookup, see [Consuming payment events](consuming.md)), every request with `Authorization: Bearer <token>`. Unset: `/api/v1/*` is a 404.',
    ),
};

export function apiConfig(e: z.output<z.ZodObject<typeof apiEnvKeys>>): ApiConfig {
  return { token: e.INBOX_API_TOKEN };
}
