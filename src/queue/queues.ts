import type { JobInsert, PgBoss, Queue } from 'pg-boss';
import type { WorkerConfig } from '../config/config.ts';
import { DEAD_LETTER_QUEUE_OPTIONS } from './dead-letters.ts';
import { askAutovacuumToAnalyzeOften } from './job-table-statistics.ts';

export const WEBHOOKS_QUEUE = 'webhooks';
export const WEBHOOKS_DEAD_LETTER_QUEUE = 'webhooks-dead-letter';

/**
 * What a processing job carries: which inbox row (the row is the source of truth), and when it
 * was received, so the worker's statements find it in its month's partition without probing the
 * others (inbox/sql/received-window.ts). Jobs queued before receivedAtMs existed lack it.
 */
export interface WebhookJobData {
  inboxId: number;
  receivedAtMs?: number;
}

export interface EnqueueableEvent {
  id: number;
  provider: string;
  eventId: string;
  resourceId: string | null;
  receivedAt: Date;
}

/**
 * Jobs of one resource share a singleton key so at most one is active at a time, database-wide.
 * Events without a resource serialise only with themselves.
 */
export function singletonKeyFor(event: Pick<EnqueueableEvent, 'provider' | 'eventId' | 'resourceId'>): string {
  return event.resourceId === null ? `${event.provider}:event:${event.eventId}` : `${event.provider}:${event.resourceId}`;
}

/**
 * `startAfter`: not before then (an event waiting for a gateway's circuit breaker to half-open).
 * `retryLimit`: the retries that event still had, instead of the queue's (a new job for it must
 * not grant it a fresh budget of attempts).
 */
export function webhookJob(event: EnqueueableEvent, startAfter?: Date, retryLimit?: number): JobInsert<WebhookJobData> {
  return {
    data: { inboxId: event.id, receivedAtMs: event.receivedAt.getTime() },
    singletonKey: singletonKeyFor(event),
    ...(startAfter ? { startAfter } : {}),
    ...(retryLimit === undefined ? {} : { retryLimit }),
  };
}

/**
 * `singleton` is the one policy that serialises a key without ever refusing a job at insert time
 * (short/stately/exclusive return null for a second queued job, which would drop an event).
 * The retry schedule is pg-boss's capped exponential backoff: retryDelay · 2^n · (1..2), ≤ max.
 */
export function webhookQueueOptions(worker: WorkerConfig, notify = true): Omit<Queue, 'name'> {
  return {
    policy: 'singleton',
    retryLimit: worker.maxAttempts - 1,
    retryDelay: worker.retryDelaySeconds,
    retryBackoff: true,
    retryDelayMax: worker.retryDelayMaxSeconds,
    expireInSeconds: worker.expireInSeconds,
    // work() refreshes every active job of a batch every heartbeatSeconds / 2 while the handler
    // runs; the supervisor fails (retry with backoff, one attempt spent) a job whose heartbeat went
    // stale. Copied onto each job at insert, so jobs queued before a change keep their old value.
    ...(worker.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: worker.heartbeatSeconds }),
    // Queued jobs must outlive the longest backoff chain; the sweeper re-enqueues anything older.
    retentionSeconds: 30 * 24 * 3600,
    // A finished job says nothing the inbox row does not (status, attempts, last error), yet every
    // monitor pass, every 5 s (boss.ts), counts the whole job table: 12 / 27 / 58 / 70 ms at 0 /
    // 100,000 / 500,000 / 1,000,000 finished jobs (2026-12-05). A day, as the deliveries queue keeps
    // them, not the seven it was: pg-boss deletes once a day, so the table holds two days at most.
    deleteAfterSeconds: 24 * 3600,
    deadLetter: WEBHOOKS_DEAD_LETTER_QUEUE,
    // Off when no worker can LISTEN (DATABASE_LISTEN_NOTIFY=false): a NOTIFY nobody hears still
    // queues a notification and takes PostgreSQL's database-wide notify lock in every commit.
    notify,
  };
}

/**
 * Creates the queues, or brings an existing queue's retry settings up to date (policy is fixed).
 * An absent heartbeat is written as null: updateQueue leaves an omitted setting as it was.
 * `notify` is the deployment's DATABASE_LISTEN_NOTIFY: every instance must agree on it.
 */
export async function ensureQueues(boss: PgBoss, worker: WorkerConfig, notify = true): Promise<void> {
  await boss.createQueue(WEBHOOKS_DEAD_LETTER_QUEUE, DEAD_LETTER_QUEUE_OPTIONS);
  const { policy, ...updatable } = webhookQueueOptions(worker, notify);
  await boss.createQueue(WEBHOOKS_QUEUE, { policy, ...updatable });
  await boss.updateQueue(WEBHOOKS_QUEUE, { ...updatable, heartbeatSeconds: worker.heartbeatSeconds ?? null });
  await askAutovacuumToAnalyzeOften(boss, WEBHOOKS_QUEUE);
}
