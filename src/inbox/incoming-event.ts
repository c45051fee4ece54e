import type { EventSource } from '../db/schema.ts';
import type { VerificationProof } from '../gateways/shared/proof.ts';
import type { NormalizedEvent } from '../gateways/shared/webhook-driver.ts';

export interface IncomingEvent {
  provider: string;
  event: NormalizedEvent;
  rawBody: Buffer;
  /** What the event says, hashed (event-fingerprint.ts): a later duplicate is compared with it. */
  fingerprint: string;
  /** How it arrived; undefined = `webhook` (a verified request). `backfill`: listed from the gateway's API. */
  source?: EventSource;
  /** How it was authenticated (webhook_inbox.verification). */
  proof: VerificationProof;
}

export const eventKey = (provider: string, eventId: string) => `${provider}\u0000${eventId}`;
