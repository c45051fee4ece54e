import type { Logger } from 'pino';

/**
 * Per-request values every route may read: the request-scoped logger carries the request id;
 * `deliveryOutcome` tells the delivery metrics whether a 200 stored a new event or a duplicate.
 */
export type AppEnv = { Variables: { logger: Logger; deliveryOutcome?: 'accepted' | 'duplicate' } };
