import type { NormalizedEvent } from '../providers/types.ts';

export interface IncomingEvent {
  provider: string;
  event: NormalizedEvent;
  rawBody: Buffer;
  /** What the event says, hashed (event-fingerprint.ts): a later duplicate is compared with it. */
  fingerprint: string;
}

export const eventKey = (provider: string, eventId: string) => `${provider}\u0000${eventId}`;
