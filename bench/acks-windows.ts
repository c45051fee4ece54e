/**
 * `node bench/acks-windows.ts <acks-….csv> [threshold ms = 25] [window ms = 100]`: the windows of a
 * paced run (BENCH_ACKS_TRACE) holding more than three acks slower than the threshold, each with its
 * wall-clock time, so a burst can be matched with what the service and PostgreSQL logged then.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const [file, thresholdArg, windowArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/acks-windows.ts <acks-<epoch ms>.csv> [threshold ms] [window ms]');
  process.exit(2);
}
const threshold = Number(thresholdArg ?? 25);
const windowMs = Number(windowArg ?? 100);
const startedAt = Number(/acks-(\d+)\.csv$/.exec(path.basename(file))?.[1] ?? 0);
const rows = readFileSync(file, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((line) => line.split(',').map(Number) as [number, number, number]);
const windows = new Map<number, { slow: number; worst: number; lag: number }>();
for (const [due, latency, lag] of rows) {
  const key = Math.floor(due / windowMs);
  const w = windows.get(key) ?? { slow: 0, worst: 0, lag: 0 };
  if (latency > threshold) w.slow += 1;
  w.worst = Math.max(w.worst, latency);
  w.lag = Math.max(w.lag, lag);
  windows.set(key, w);
}
const slow = rows.filter(([, latency]) => latency > threshold).length;
console.log(`${rows.length} acks, ${slow} slower than ${threshold} ms (${((100 * slow) / Math.max(1, rows.length)).toFixed(1)}%)`);
for (const [key, w] of [...windows].sort(([a], [b]) => a - b)) {
  if (w.slow <= 3) continue;
  const at = new Date(startedAt + key * windowMs).toISOString().slice(11, 23);
  console.log(
    `  +${((key * windowMs) / 1000).toFixed(1)} s (${at} UTC): ${w.slow} slow, worst ${w.worst.toFixed(1)} ms, sender up to ${w.lag.toFixed(1)} ms late`,
  );
}
