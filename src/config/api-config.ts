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
  INBOX_API_TOKEN: z.string().min(32, 'must be at least 32 characters (e.g. `openssl rand -hex 32`); unset it to turn the API off').optional(),
};

export function apiConfig(e: z.output<z.ZodObject<typeof apiEnvKeys>>): ApiConfig {
  return { token: e.INBOX_API_TOKEN };
}
