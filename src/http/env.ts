import type { Logger } from 'pino';

/**
 * Per-request values every route may read: the request-scoped logger carries the request id;
 * `deliveryOutcome` tells the delivery metrics whether a 200 stored a new event or a duplicate;
 * `delivery` is what the webhook route knows of the delivery so far, for the line a failure logs.
 */
export type AppEnv = {
  Variables: { logger: Logger; deliveryOutcome?: 'accepted' | 'duplicate'; delivery?: { provider: string; eventId?: string } };
};
