import type { IngestOutcome } from '../inbox/group-commit.ts';
import type { RequestEnv } from '../web/request-env.ts';

/**
 * The request-scoped logger (RequestEnv), and what the receiver's own routes pass along:
 * `deliveryOutcome` tells the delivery metrics whether a 200 stored a new event, a duplicate, or
 * a duplicate that contradicts the stored event; `delivery` is what the webhook route knows of the
 * delivery so far, for the line a failure logs.
 */
export type AppEnv = {
  Variables: RequestEnv['Variables'] & { deliveryOutcome?: IngestOutcome['kind']; delivery?: { provider: string; eventId?: string } };
};
