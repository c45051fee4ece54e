import type { Logger } from 'pino';
import type { IngestOutcome } from '../inbox/group-commit.ts';

/**
 * Per-request values every route may read: the request-scoped logger carries the request id;
 * `deliveryOutcome` tells the delivery metrics whether a 200 stored a new event, a duplicate, or
 * a duplicate that contradicts the stored event; `delivery` is what the webhook route knows of the
 * delivery so far, for the line a failure logs.
 */
export type AppEnv = {
  Variables: { logger: Logger; deliveryOutcome?: IngestOutcome['kind']; delivery?: { provider: string; eventId?: string } };
};
