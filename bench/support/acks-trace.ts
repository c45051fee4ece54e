import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * BENCH_ACKS_TRACE=<folder>: every paced run also writes each request's due time, latency and the
 * sender's lateness to `<folder>/acks-<start epoch ms>.csv`. A p99 says how many acks were slow,
 * not when: the trace shows whether they came spread out or in bursts, and the epoch start lines
 * them up with the service's and PostgreSQL's own logs (bench/acks-windows.ts prints the bursts).
 */
export async function writeAcksTrace(startedAtEpochMs: number, acks: readonly (readonly [number, number, number])[]): Promise<void> {
  const folder = process.env.BENCH_ACKS_TRACE;
  if (!folder) return;
  await mkdir(folder, { recursive: true });
  const lines = acks.map(([due, latency, lag]) => `${due.toFixed(1)},${latency.toFixed(2)},${lag.toFixed(1)}`);
  await appendFile(path.join(folder, `acks-${startedAtEpochMs}.csv`), `due_ms,latency_ms,sender_lag_ms\n${lines.join('\n')}\n`);
}
