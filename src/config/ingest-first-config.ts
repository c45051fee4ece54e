import { z } from 'zod';

/**
 * Ingest first (INBOX_ROLE=all only): the workers of a process that also receives webhooks give
 * way while its receiver is under pressure, and take the CPU back once ingest is quiet. A process
 * without a receiver (worker) or without workers (receiver) has nothing to arbitrate.
 */
export interface IngestFirstConfig {
  /** INGEST_FIRST=off: the workers never yield, whatever the receiver's state. */
  enabled: boolean;
  /** A batch of webhook requests that waited longer than this for its COMMIT is a sign of slow acks. 0: every commit is. */
  ackLatencyMs: number;
  /** On average more webhook requests than this waiting for a transaction slot is saturation. 0: any waiting webhook request is. */
  queueDepth: number;
  /** A sign lasts this long after it was seen: the workers take the CPU back only after it. */
  quietMs: number;
  /** Most events a yielding worker applies in one transaction, on top of what it owes the receiver's pace while acks are only slow. */
  yieldBatchSize: number;
  /** How long a yielding worker waits before each slice, and how often it looks at the pressure again. */
  yieldPauseMs: number;
}

const intFromEnv = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);

/** The variables of ingest first, spread into config.ts's one env schema. */
export const ingestFirstEnvKeys = {
  INGEST_FIRST: z
    .enum(['on', 'off'])
    .default('on')
    .describe(
      '`INBOX_ROLE=all` only: the workers yield while the receiver of their process is under pressure (see [Processing: Ingest first](processing.md#ingest-first-single-container)). `off`: they never do. No effect in `receiver` and `worker`.',
    ),
  // The p99 the issue asks of the all role is 25 ms: yield well before an ack gets there.
  INGEST_PRESSURE_ACK_MS: intFromEnv(10, 0, 60_000).describe(
    'A group-commit batch whose oldest webhook request waited longer than this for its COMMIT is a sign of slow acks: the workers yield but keep pace with what arrives. `0`: every commit is.',
  ),
  // A mean, not a peak: a paced 1,000 a second kept it at 5–12 on the bench machine (2026-12-05),
  // 64 senders at full speed at 17–32. Above it the receiver is behind and the workers keep out.
  INGEST_PRESSURE_QUEUE_DEPTH: intFromEnv(16, 0, 100_000).describe(
    'On average (over about the last 500 webhook requests) more webhook requests than this waiting for a transaction slot is saturation: the workers yield everything but a slice per pause. `0`: any waiting webhook request is.',
  ),
  INGEST_QUIET_MS: intFromEnv(1000, 10, 600_000).describe('Each sign lasts this long after it was last seen; then the workers take the CPU back.'),
  WORKER_YIELD_BATCH_SIZE: intFromEnv(10, 1, 500).describe(
    "While yielding: most events per transaction (on top of those the workers owe the receiver's pace while acks are only slow).",
  ),
  WORKER_YIELD_PAUSE_MS: intFromEnv(50, 1, 10_000).describe('While yielding: the pause before each of those transactions.'),
};

export function ingestFirstConfig(e: z.output<z.ZodObject<typeof ingestFirstEnvKeys>>): IngestFirstConfig {
  return {
    enabled: e.INGEST_FIRST === 'on',
    ackLatencyMs: e.INGEST_PRESSURE_ACK_MS,
    queueDepth: e.INGEST_PRESSURE_QUEUE_DEPTH,
    quietMs: e.INGEST_QUIET_MS,
    yieldBatchSize: e.WORKER_YIELD_BATCH_SIZE,
    yieldPauseMs: e.WORKER_YIELD_PAUSE_MS,
  };
}
