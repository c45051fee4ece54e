import type { PgBoss } from 'pg-boss';

/** Every dead-letter queue's own settings: its handler is a short, idempotent write, retried a few times. */
export const DEAD_LETTER_QUEUE_OPTIONS = { policy: 'standard', retryLimit: 5, retryDelay: 5, retryBackoff: true } as const;

/** A job pg-boss dead-lettered after its last retry: its data, how many times it ran, and what its last run said. */
export interface DeadLetter<T> {
  data: T;
  runs: number;
  finalFailure: string;
}

/** What pg-boss stored as the final attempt's output: our `{ error }`, or its own serialized error (expiry, shutdown). */
function describeFinalFailure(sourceOutput: unknown): string {
  if (sourceOutput && typeof sourceOutput === 'object') {
    const output = sourceOutput as { error?: unknown; message?: unknown };
    if (typeof output.error === 'string') return output.error;
    if (typeof output.message === 'string') return `pg-boss: ${output.message}`;
  }
  return 'retries exhausted (pg-boss recorded no error)';
}

/** Works a dead-letter queue: each letter once through `handle`, which must be idempotent (a letter may come again). */
export async function workDeadLetters<T extends object>(
  boss: PgBoss,
  queue: string,
  pollingIntervalSeconds: number,
  handle: (letter: DeadLetter<T>) => Promise<void>,
): Promise<void> {
  const work = { batchSize: 10, includeMetadata: true, pollingIntervalSeconds } as const;
  await boss.work<T, void, typeof work>(queue, work, async (jobs) => {
    for (const job of jobs) await handle({ data: job.data, runs: (job.sourceRetryCount ?? 0) + 1, finalFailure: describeFinalFailure(job.sourceOutput) });
  });
}
