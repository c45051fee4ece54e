import type { IngestRun } from '../scenarios/ingest.ts';
import type { OperationsRun } from '../scenarios/operations.ts';
import type { ProcessingRun } from '../scenarios/processing.ts';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const fixed = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percent = (n: number) => `${Math.round(n * 100)}%`;

export interface Summary {
  table: string;
  targets: Array<{ target: string; measured: string; met: boolean | null }>;
}

/** Medians over the repeats; the ratio also shows its spread (min–max), which is what survives a noisy host. */
export function summarize(ingest: IngestRun[] | undefined, processing: ProcessingRun[] | undefined, operations: OperationsRun[] | undefined): Summary {
  const lines = [
    '| Row | Load | req/s or events/s | p50 ms | p99 ms | 200s / rows / jobs | inbox ÷ baseline | CPU µs per request: server + PostgreSQL + load generator |',
    '|---|---|---:|---:|---:|---|---|---|',
  ];
  const cpu = (splits: Array<{ serverUs: number; postgresUs: number | null; loadGeneratorUs: number }>, withPostgres: boolean) =>
    `${fixed(median(splits.map((c) => c.serverUs)))} + ${withPostgres && splits.every((c) => c.postgresUs !== null) ? fixed(median(splits.map((c) => c.postgresUs!))) : '–'} + ${fixed(median(splits.map((c) => c.loadGeneratorUs)))}`;
  const targets: Summary['targets'] = [];
  const levels = [...new Map((ingest ?? []).map((r) => [r.level.name, r.level])).values()];
  for (const level of levels) {
    const runs = ingest!.filter((r) => r.level.name === level.name);
    const load = level.rate ? `${fixed(level.rate)} req/s paced, ≤ ${level.connections} conns` : `${level.connections} conn${level.connections > 1 ? 's' : ''}`;
    const base = runs.map((r) => r.baseline);
    const inbox = runs.map((r) => r.inbox);
    const ratios = runs.map((r) => r.ratio);
    const ok = inbox.reduce((a, r) => a + r.ok, 0);
    const rows = inbox.reduce((a, r) => a + r.committed.rows, 0);
    const jobs = inbox.reduce((a, r) => a + r.committed.jobs, 0);
    const matches = inbox.every((r) => r.committed.matches);
    lines.push(`| baseline | ${load} | ${fixed(median(base.map((r) => r.requestsPerSecond)))} | ${median(base.map((r) => r.latencyMs.p50))} | ${median(base.map((r) => r.latencyMs.p99))} | ${fixed(base.reduce((a, r) => a + r.ok, 0))} / – / – | | ${cpu(base.map((r) => r.cpu), false)} |`);
    lines.push(
      `| **inbox** | ${load} | **${fixed(median(inbox.map((r) => r.requestsPerSecond)))}** | ${median(inbox.map((r) => r.latencyMs.p50))} | **${median(inbox.map((r) => r.latencyMs.p99))}** | ${fixed(ok)} / ${fixed(rows)} / ${fixed(jobs)} ${matches ? '✓' : '**MISMATCH**'} | **${percent(median(ratios))}** (${percent(Math.min(...ratios))}–${percent(Math.max(...ratios))}) | ${cpu(inbox.map((r) => r.cpu), true)} |`,
    );
    if (level.name === 'c64') {
      targets.push({ target: 'durable ingest ≥ 50% of the baseline at 64 connections', measured: `${percent(median(ratios))} (${percent(Math.min(...ratios))}–${percent(Math.max(...ratios))})`, met: median(ratios) >= 0.5 });
    }
    if (level.rate) {
      const p99 = median(inbox.map((r) => r.latencyMs.p99));
      targets.push({ target: 'p99 ack ≤ 25 ms at 1,000 req/s', measured: `${p99} ms`, met: p99 <= 25 });
    }
  }
  for (const run of processing ?? []) {
    const settings = Object.keys(run.env).length === 0 ? 'default worker settings' : Object.entries(run.env).map(([k, v]) => `${k}=${v}`).join(' ');
    lines.push(`| processing | ${fixed(run.events)} events / ${fixed(run.charges)} charges backlog, ${settings} | **${fixed(run.eventsPerSecond)}** events/s | | | ${JSON.stringify(run.statuses).replaceAll('"', '')}, ${fixed(run.paymentsRefunded)}/${fixed(run.charges)} payments correct | | ${fixed(run.cpu.serverUs)} + ${run.cpu.postgresUs === null ? '?' : fixed(run.cpu.postgresUs)} (worker + PostgreSQL, per event) |`);
  }
  const defaults = processing?.find((r) => Object.keys(r.env).length === 0);
  targets.push(
    defaults
      ? { target: 'processing ≥ 2,000 events/s', measured: `${fixed(defaults.eventsPerSecond)} events/s (defaults)`, met: defaults.eventsPerSecond >= 2000 }
      : { target: 'processing ≥ 2,000 events/s', measured: 'not measured in this run', met: null },
  );
  for (const run of operations ?? []) {
    for (const timing of run.timings) {
      const indexes = [...new Set(timing.plans.flatMap((p) => p.scans).filter((s) => s.includes(' using ')).map((s) => s.replace(/.* using (\S+).*/, '$1')))];
      const seq = timing.plans.some((p) => p.seqScanOfBigTable);
      lines.push(`| ${timing.operation} | ${fixed(run.rows)} inbox rows | | ${fixed(timing.medianMs, 1)} (median) | ${fixed(timing.maxMs, 1)} (max) | ${seq ? '**seq scan** + ' : ''}${indexes.join(', ')} | | |`);
    }
  }
  return { table: lines.join('\n'), targets };
}
