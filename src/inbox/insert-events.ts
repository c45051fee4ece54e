import type { Transaction } from '../db/client.ts';
import { webhookInbox } from '../db/schema.ts';
import type { NormalizedEvent } from '../providers/types.ts';

export interface IncomingEvent {
  provider: string;
  event: NormalizedEvent;
  rawBody: Buffer;
}

export interface InsertedEvent {
  id: number;
  provider: string;
  eventId: string;
  resourceId: string | null;
}

/**
 * One multi-row INSERT … ON CONFLICT (provider, event_id) DO NOTHING RETURNING: the rows that come
 * back are the new ones; anything absent was already in the inbox. The unique index decides, so
 * concurrent deliveries of one event can never both be "new".
 */
export async function insertEventsIfAbsent(tx: Transaction, events: IncomingEvent[]): Promise<InsertedEvent[]> {
  if (events.length === 0) return [];
  return tx
    .insert(webhookInbox)
    .values(
      events.map(({ provider, event, rawBody }) => ({
        provider,
        eventId: event.eventId,
        eventType: event.eventType,
        resourceId: event.resourceId,
        payload: event.payload,
        rawBody,
        occurredAt: event.occurredAt,
      })),
    )
    .onConflictDoNothing({ target: [webhookInbox.provider, webhookInbox.eventId] })
    .returning({
      id: webhookInbox.id,
      provider: webhookInbox.provider,
      eventId: webhookInbox.eventId,
      resourceId: webhookInbox.resourceId,
    });
}

export const eventKey = (provider: string, eventId: string) => `${provider}\u0000${eventId}`;
