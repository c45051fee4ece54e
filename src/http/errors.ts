import type { Context } from 'hono';
import type { Logger } from 'pino';
import { InboxError, StorageUnavailableError } from '../errors.ts';

/** One error body for every failure: `{ "error": { "code", "message" } }`, never a secret or a computed signature. */
export function errorResponse(error: unknown, c: Context, logger: Logger): Response {
  if (error instanceof InboxError) {
    if (error.status === 503) {
      // Every 503 is "not stored, send it again": tell the gateway when.
      const retryAfter = error instanceof StorageUnavailableError ? error.retryAfterSeconds : 5;
      c.header('Retry-After', String(retryAfter));
      logger.error({ err: error.cause ?? error, code: error.code }, 'delivery not stored');
    } else {
      logger.info({ code: error.code, status: error.status }, 'delivery rejected');
    }
    return c.json({ error: { code: error.code, message: error.message } }, error.status as 400);
  }
  logger.error({ err: error }, 'unexpected error');
  return c.json({ error: { code: 'internal_error', message: 'Unexpected error; the event was not acknowledged.' } }, 500);
}
