import type { Logger } from 'pino';

/** Per-request values every route may read: the request-scoped logger carries the request id. */
export type AppEnv = { Variables: { logger: Logger } };
