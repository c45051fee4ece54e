import type { Context } from 'hono';
import type { Logger } from 'pino';
import { classifyDatabaseError } from '../db/database-errors.ts';
import { withoutQueryText } from '../error-redaction.ts';
import { EventUnstorableError, InboxError, StorageUnavailableError } from '../errors.ts';
import { blamesTheDatabase } from '../operations/database-blame.ts';
import type { AppEnv } from './env.ts';

const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * One error body for every failure: `{ "error": { "code", "message" } }` with the error's own
 * message, which may name a field but never quotes what the sender sent, a driver's text, a secret
 * or a computed signature. The log line names
 * the webhook request (provider, eventId when known) and carries the cause; the logger's serializer
 * strips whatever of a PostgreSQL error can quote the payload (src/error-redaction.ts).
 */
export function errorResponse(error: unknown, c: Context<AppEnv>, logger: Logger): Response {
  const webhookRequest = c.get('webhookRequest');
  if (error instanceof InboxError) {
    if (error.status === 503) {
      // Every 503 is "not stored, send it again": tell the gateway when.
      const retryAfter = error instanceof StorageUnavailableError ? error.retryAfterSeconds : 5;
      c.header('Retry-After', String(retryAfter));
      logger.error({ ...webhookRequest, err: error.cause ?? error, code: error.code }, 'delivery not stored');
    } else if (error instanceof EventUnstorableError) {
      // Signed, so a gateway's event, and refused for good: worth an operator's look.
      logger.warn({ ...webhookRequest, err: error.cause ?? error, code: error.code, status: error.status }, 'delivery rejected');
    } else {
      logger.info({ ...webhookRequest, code: error.code, status: error.status }, 'delivery rejected');
    }
    return c.json({ error: { code: error.code, message: error.message } }, error.status as 400);
  }
  // The dashboard and /api/v1 query the database on every request. While it is down that is the
  // same outage the receiver answers 503 to and /readyz reports, not a bug of ours: say so, and when
  // to come back, instead of a 500.
  if (isDatabaseOutage(error)) {
    c.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    logger.warn({ err: error, path: c.req.path }, 'request not served: the database cannot be reached');
    return c.json({ error: { code: 'database_unavailable', message: 'The database cannot be reached right now; ask again after Retry-After seconds.' } }, 503);
  }
  logger.error({ ...webhookRequest, err: error, path: c.req.path }, 'unexpected error');
  // Only a gateway's webhook request has an event to speak of; an operator's or an application's request does not.
  const message =
    webhookRequest || c.req.path.startsWith('/webhooks/') ? 'Unexpected error; the event was not acknowledged.' : 'Unexpected error; ask again later.';
  return c.json({ error: { code: 'internal_error', message } }, 500);
}

/**
 * Unreachable (the socket's codes, not through a gateway's error) or refusing everything for now
 * (SQLSTATE 08, 57P01 while it shuts down, …). A gateway's own errors carry codes of their own
 * (gateway_unavailable, …), which classifyDatabaseError never takes for the database's.
 */
function isDatabaseOutage(error: unknown): boolean {
  return blamesTheDatabase(error) || classifyDatabaseError(withoutQueryText(error)) === 'availability';
}
