import type { ConfiguredProvider } from '../config/config.ts';
import type { Database } from '../db/client.ts';
import { describeError } from '../errors.ts';
import { errorClassOf } from '../observability/error-class.ts';
import type { ProcessingMetrics } from '../observability/metrics.ts';
import { BreakerOpenError } from '../refetch/errors.ts';
import { type HandlerOutcome, type HandlerRegistry, type InboxEvent, canonicalKind } from './handlers.ts';
import { lockInboxEvent, markEventOutcome, readInboxEvent, recordFailedAttempt } from './inbox-sql.ts';

export interface ProcessingDeps {
  db: Database;
  providers: ReadonlyMap<string, ConfiguredProvider>;
  handlers: HandlerRegistry;
  /** Attempts, failures by error class, received → processed latency (observability/metrics.ts). */
  metrics?: ProcessingMetrics;
  /**
   * Queues the event again to start at `startAfter`, leaving its row pending with `reason`.
   * Without it a gateway breaker that is open fails the attempt like any other error.
   */
  deferEvent?(inboxId: number, startAfter: Date, reason: string): Promise<void>;
}

/**
 * `skipped`: the row is gone or no longer pending; another job (or this job's earlier attempt)
 * handled it. `deferred`: the gateway's circuit breaker is open; a new job starts when it half-opens.
 */
export type JobOutcome = HandlerOutcome | 'skipped' | 'deferred';

export class ProviderNotConfiguredError extends Error {
  readonly code = 'provider_not_configured';
  constructor(provider: string) {
    super(`No provider named "${provider}" is configured in this process, so its events cannot be read. Restore its configuration, then replay.`);
    this.name = 'ProviderNotConfiguredError';
  }
}

const MAX_ERROR_LENGTH = 2000;

/**
 * One job, one stored event. Outside any transaction: read the row, route it by canonical kind,
 * let the handler `prepare` (slow I/O). Then ONE transaction: lock the inbox row; unless it is still
 * pending, stop (jobs are idempotent: the sweeper and replays re-enqueue freely); the handler
 * applies the event to its domain row; the row becomes processed/ignored with attempts + 1.
 * Either all of that commits or none of it does.
 *
 * A failure rolls the transaction back; the attempt and its error are then recorded outside it
 * and the error is rethrown, so pg-boss retries the job with backoff. An open gateway breaker is
 * no failure of the event: it is queued again for when the breaker half-opens, without spending
 * one of its attempts (and without being applied from its payload).
 */
export async function processInboxEvent(deps: ProcessingDeps, inboxId: number, signal?: AbortSignal): Promise<JobOutcome> {
  // Filled in once the row is read, so a failure is counted under its provider.
  const attempt: { provider?: string } = {};
  try {
    return await processOnce(deps, inboxId, signal, attempt);
  } catch (error) {
    if (error instanceof BreakerOpenError && deps.deferEvent) {
      await deps.deferEvent(inboxId, error.halfOpensAt, describeError(error).slice(0, MAX_ERROR_LENGTH));
      return 'deferred';
    }
    if (attempt.provider !== undefined) deps.metrics?.failure(attempt.provider, errorClassOf(error));
    // Best effort: when the database itself is what failed, this fails too and the retry still happens.
    await recordFailedAttempt(deps.db, inboxId, describeError(error).slice(0, MAX_ERROR_LENGTH)).catch(() => {});
    throw error;
  }
}

async function processOnce(deps: ProcessingDeps, inboxId: number, signal: AbortSignal | undefined, attempt: { provider?: string }): Promise<JobOutcome> {
  const row = await readInboxEvent(deps.db, inboxId);
  if (!row || row.status !== 'pending') return 'skipped';
  attempt.provider = row.provider;
  deps.metrics?.attempt(row.provider);
  const provider = deps.providers.get(row.provider);
  if (!provider) throw new ProviderNotConfiguredError(row.provider);
  const fact = provider.driver.toPaymentFact(row);
  const event: InboxEvent = { inboxId, provider, stored: row, kind: canonicalKind(provider, row, fact), fact };
  const handler = deps.handlers.handlerFor(event.kind);
  const context = handler?.prepare ? await handler.prepare(event, signal ?? new AbortController().signal) : undefined;
  // pg-boss aborts the signal when the job expired or shutdown gave up on it: start nothing new.
  signal?.throwIfAborted();
  const outcome = await deps.db.transaction(async (tx): Promise<HandlerOutcome | 'skipped'> => {
    if ((await lockInboxEvent(tx, inboxId)) !== 'pending') return 'skipped';
    const outcome = handler ? await handler.apply(tx, event, context) : 'ignored';
    await markEventOutcome(tx, inboxId, outcome);
    return outcome;
  });
  if (outcome !== 'skipped') deps.metrics?.settled(row.provider, outcome, row.receivedAt, new Date());
  return outcome;
}
