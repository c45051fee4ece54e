import { and, desc, eq } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';
import { webhookInbox } from '../../db/schema.ts';

export interface FailedEvent {
  id: number;
  provider: string;
  eventId: string;
  eventType: string;
  resourceId: string | null;
  attempts: number;
  lastError: string | null;
  receivedAt: Date;
}

/** The newest failed rows first: a backward walk of the (status, received_at) index. */
export async function selectFailedEvents(db: Executor, options: { provider?: string; limit: number }): Promise<FailedEvent[]> {
  return db
    .select({
      id: webhookInbox.id,
      provider: webhookInbox.provider,
      eventId: webhookInbox.eventId,
      eventType: webhookInbox.eventType,
      resourceId: webhookInbox.resourceId,
      attempts: webhookInbox.attempts,
      lastError: webhookInbox.lastError,
      receivedAt: webhookInbox.receivedAt,
    })
    .from(webhookInbox)
    .where(and(eq(webhookInbox.status, 'failed'), options.provider ? eq(webhookInbox.provider, options.provider) : undefined))
    .orderBy(desc(webhookInbox.receivedAt))
    .limit(options.limit);
}
