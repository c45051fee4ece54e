import type { IngestOutcome } from '../inbox/group-commit.ts';
import type { RequestEnv } from '../web/request-env.ts';

/**
 * The request-scoped logger (RequestEnv), and what the receiver's own routes pass along:
 * `webhookRequestOutcome` tells the webhook request metrics whether a 200 stored a new event, a duplicate, or
 * a duplicate that contradicts the stored event; `webhookRequest` is what the webhook route knows of the
 * request so far, for the line a failure logs.
 */
export type AppEnv = {
  Variables: RequestEnv['Variables'] & { webhookRequestOutcome?: IngestOutcome['kind']; webhookRequest?: { provider: string; eventId?: string } };
};
