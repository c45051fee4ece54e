import type { PaymentEventRow } from '../domain/payments/schema.ts';
import type { DeliveryTimers } from './delivery-timers.ts';
import type { PostResult } from './post-event.ts';
import type { StandardWebhookHeaders } from './sign.ts';

/** One event as it leaves: the contract's body and this attempt's Standard Webhooks headers. */
export interface OutgoingEvent {
  /** The outbox row: what a broker routes by (its payment) and names the message by (its id). */
  event: PaymentEventRow;
  body: string;
  headers: StandardWebhookHeaders;
  timeoutMs: number;
  /** The job's: aborted when pg-boss gives up on it (expiry, shutdown). */
  signal?: AbortSignal;
  /** What the HTTP transport times its POST by (a test's clock moves them); a broker keeps its own confirm timeout. */
  timers?: DeliveryTimers;
}

/**
 * How signed events reach a destination. The lanes (ordering, retries, parking, a destination's
 * backoff) are the same whatever the transport: they only see each attempt's PostResult. A broker's
 * transport answers `delivered` only once the broker has taken the message for good (a publisher
 * confirm, a JetStream ack); everything else is a failed attempt. Never rejects.
 */
export interface EventTransport {
  send(outgoing: OutgoingEvent): Promise<PostResult>;
  /** Ends the transport's connections (a broker's are long-lived); sends after it fail. */
  close(): Promise<void>;
}
