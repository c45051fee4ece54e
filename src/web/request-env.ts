import type { Logger } from 'pino';

/**
 * What every route may read, whichever face mounts it (the webhook receiver, the dashboard): the
 * request-scoped logger, set by the app's first middleware, carries the request id.
 */
export type RequestEnv = {
  Variables: { logger: Logger };
};
