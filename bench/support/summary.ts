import type { IngestRun } from '../scenarios/ingest.ts';
import type { ForwardingRun } from '../scenarios/forwarding.ts';
import type { ForwardingBacklogRun } from '../scenarios/forwarding-backlog.ts';
import type { OperationsRun } from '../scenarios/operations.ts';
import type { ProcessingRun } from '../scenarios/processing.ts';
import type { ContainerPhase, SingleContainerRun } from '../scenarios/single-container.ts';
import type { CpuSplit } from './cpu.ts';
import type { DurableRun } from './durable-run.ts';
import { median } from './median.ts';

const fixed = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percent = (n: number) => `${Math.round(n * 100)}%`;
const times = (n: number) => `${n.toFixed(2)}×`;
/** The median, and the spread (min–max) that survives a noisy host. */
const withRange = (values: number[], format: (n: number) => string) =>
  `**${format(median(values))}** (${format(Math.min(...values))}–${format(Math.max(...values))})`;

export interface Summary {
  table: string;
  targets: Array<{ target: string; measured: string; met: boolean | null }>;
}

type Targets = Summary['targets'];

const HEADER = [
  '| Row | Load | req/s or events/s | p50 ms | p99 ms | 200s / rows / jobs | ratios | CPU µs per request: server + PostgreSQL + load generator |',
  '|---|---|---:|---:|---:|---|---|---|',
];

function cpu(splits: CpuSplit[], withPostgres: boolean): string {
  const postgres = withPostgres && splits.every((c) => c.postgresUs !== null) ? fixed(median(splits.map((c) => c.postgresUs!))) : '–';
  return `${fixed(median(splits.map((c) => c.serverUs)))} + ${postgres} + ${fixed(median(splits.map((c) => c.loadGeneratorUs)))}`;
}

function committed(runs: DurableRun[]): string {
  const sum = (f: (r: DurableRun) => number) => fixed(runs.reduce((a, r) => a + f(r), 0));
  return `${sum((r) => r.ok)} / ${sum((r) => r.committed.rows)} / ${sum((r) => r.committed.jobs)} ${runs.every((r) => r.committed.matches) ? '✓' : '**MISMATCH**'}`;
}

/** One durable row (peer, inbox, a single-container phase): medians of req/s, p50 and p99. */
function durableRow(label: string, load: string, runs: DurableRun[], ratios: string, bold: boolean): string {
  const b = (text: string) => (bold ? `**${text}**` : text);
  const rps = fixed(median(runs.map((r) => r.requestsPerSecond)));
  return `| ${label} | ${load} | ${b(rps)} | ${median(runs.map((r) => r.latencyMs.p50))} | ${b(String(median(runs.map((r) => r.latencyMs.p99))))} | ${committed(runs)} | ${ratios} | ${cpu(
    runs.map((r) => r.cpu),
    true,
  )} |`;
}

/** The ingest targets, from the runs of each level. */
function ingestTargets(byLevel: IngestRun[][], targets: Targets): void {
  const p99s: string[] = [];
  let p99Lower = true;
  for (const runs of byLevel) {
    const { level } = runs[0]!;
    const inboxP99 = median(runs.map((r) => r.inbox.latencyMs.p99));
    const peerP99 = median(runs.map((r) => r.peer.latencyMs.p99));
    p99s.push(`${level.name} ${inboxP99} vs ${peerP99} ms`);
    p99Lower &&= inboxP99 < peerP99;
    if (level.name === 'c64') {
      targets.push({
        target: 'durable ingest ≥ 50% of the baseline at 64 connections',
        measured: withRange(
          runs.map((r) => r.ratio),
          percent,
        ).replaceAll('**', ''),
        met: median(runs.map((r) => r.ratio)) >= 0.5,
      });
      targets.push({
        target: 'inbox ≥ 4× the peer at 64 connections (issue 15)',
        measured: withRange(
          runs.map((r) => r.peerRatio),
          times,
        ).replaceAll('**', ''),
        met: median(runs.map((r) => r.peerRatio)) >= 4,
      });
      // No target of its own: issue 30 asks only that the figure be stated beside the other peer's.
      targets.push({
        target: 'inbox ÷ the seed-style peer at 64 connections (issue 30)',
        measured: withRange(
          runs.map((r) => r.seedPeerRatio),
          times,
        ).replaceAll('**', ''),
        met: null,
      });
    }
    if (level.rate) {
      const p99 = median(runs.map((r) => r.inbox.latencyMs.p99));
      targets.push({ target: 'p99 ack ≤ 25 ms at 1,000 req/s', measured: `${p99} ms`, met: p99 <= 25 });
    }
  }
  targets.push({ target: 'inbox p99 below the peer’s at every load (issue 15)', measured: p99s.join(', '), met: p99Lower });
}

/** Baseline, the two peers and inbox rows per ingest level, and the ingest targets. */
function ingestRows(ingest: IngestRun[], lines: string[], targets: Targets): void {
  const byLevel = [...new Set(ingest.map((r) => r.level.name))].map((name) => ingest.filter((r) => r.level.name === name));
  for (const runs of byLevel) {
    const { level } = runs[0]!;
    const load = level.rate ? `${fixed(level.rate)} req/s paced, ≤ ${level.connections} conns` : `${level.connections} conn${level.connections > 1 ? 's' : ''}`;
    const base = runs.map((r) => r.baseline);
    const ofBaseline = (peer: (r: IngestRun) => DurableRun) =>
      `${percent(median(runs.map((r) => peer(r).requestsPerSecond / r.baseline.requestsPerSecond)))} of baseline`;
    lines.push(
      `| baseline | ${load} | ${fixed(median(base.map((r) => r.requestsPerSecond)))} | ${median(base.map((r) => r.latencyMs.p50))} | ${median(base.map((r) => r.latencyMs.p99))} | ${fixed(base.reduce((a, r) => a + r.ok, 0))} / – / – | | ${cpu(
        base.map((r) => r.cpu),
        false,
      )} |`,
    );
    lines.push(
      durableRow(
        'peer, inbox schema',
        load,
        runs.map((r) => r.peer),
        ofBaseline((r) => r.peer),
        false,
      ),
    );
    lines.push(
      durableRow(
        'peer, seed table',
        load,
        runs.map((r) => r.seedPeer),
        ofBaseline((r) => r.seedPeer),
        false,
      ),
    );
    const ratios = `${withRange(
      runs.map((r) => r.ratio),
      percent,
    )} of baseline; ${withRange(
      runs.map((r) => r.peerRatio),
      times,
    )} the peer on the inbox schema; ${withRange(
      runs.map((r) => r.seedPeerRatio),
      times,
    )} the seed-style peer`;
    lines.push(
      durableRow(
        '**inbox**',
        load,
        runs.map((r) => r.inbox),
        ratios,
        true,
      ),
    );
  }
  ingestTargets(byLevel, targets);
}

function drained(phase: ContainerPhase): string {
  const { backlog } = phase;
  return `backlog ${fixed(backlog.pendingAtStart)} → ${fixed(backlog.pendingAtEnd)} pending (${fixed(backlog.eventsPerSecond)} events/s drained${backlog.ranOut ? ', **ran out**' : ''})`;
}

/** Several runs of one phase, each on its own copy of the backlog: the median drain rate and its range. */
function drainedOf(phases: ContainerPhase[]): string {
  if (phases.length === 1) return drained(phases[0]!);
  const rates = phases.map((phase) => phase.backlog.eventsPerSecond);
  const ranOut = phases.some((phase) => phase.backlog.ranOut) ? ', **ran out** in a run' : '';
  return `backlog drained at ${withRange(rates, (n) => fixed(n)).replaceAll('**', '')} events/s (${phases.length} runs)${ranOut}`;
}

/** The single-container rows (INBOX_ROLE=all under a backlog) and their two targets from issue 15. */
function containerRows(run: SingleContainerRun | undefined, lines: string[], targets: Targets): void {
  const p99Target = 'single container: p99 ack ≤ 25 ms at 1,000 req/s while a 50,000-event backlog drains (issue 15)';
  const ratioTarget = 'single container: all role ≥ 80% of the receiver role at 64 connections, same backlog (issue 15)';
  if (!run) {
    targets.push(
      { target: p99Target, measured: 'not measured in this run', met: null },
      { target: ratioTarget, measured: 'not measured in this run', met: null },
    );
    return;
  }
  const backlog = `${fixed(run.backlogEvents)}-event backlog`;
  const paced = `${fixed(run.paced[0]!.level.rate ?? 0)} req/s paced, ≤ ${run.paced[0]!.level.connections} conns, ${backlog} draining`;
  const p99s = run.paced.map((phase) => phase.latencyMs.p99);
  const p99 = median(p99s);
  const pacedP99s = run.paced.length > 1 ? `p99 ${Math.min(...p99s)}–${Math.max(...p99s)} ms over ${p99s.length} runs; ` : '';
  lines.push(durableRow('single container (all)', paced, run.paced, `${pacedP99s}${drainedOf(run.paced)}`, true));
  lines.push(durableRow('all, INGEST_FIRST=off', paced, [run.pacedWithoutYield], drained(run.pacedWithoutYield), false));
  lines.push(durableRow('receiver', `64 conns, same ${backlog} (no workers)`, run.receiver, drainedOf(run.receiver), false));
  const ratio = median(run.ratios);
  lines.push(
    durableRow(
      'single container (all)',
      `64 conns, same ${backlog} draining`,
      run.all,
      `${withRange(run.ratios, percent)} of receiver; ${drainedOf(run.all)}`,
      true,
    ),
  );
  lines.push(
    durableRow(
      'all, INGEST_FIRST=off',
      `64 conns, same ${backlog} draining`,
      [run.allWithoutYield],
      `${percent(run.ratioWithoutYield)} of receiver; ${drained(run.allWithoutYield)}`,
      false,
    ),
  );
  const ranOut = run.paced.some((phase) => phase.backlog.ranOut) ? ' (the backlog ran out during a run)' : '';
  const rate = run.paced[0]!.level.rate === 1000 ? '' : ` — measured at ${fixed(run.paced[0]!.level.rate ?? 0)} req/s (BENCH_CONTAINER_RATE), not 1,000`;
  const runs = run.paced.length > 1 ? ` (median of ${run.paced.length} runs: ${p99s.join(' / ')} ms)` : '';
  const pacedMeasured = `${p99} ms${runs}, p50 ${median(run.paced.map((phase) => phase.latencyMs.p50))} ms${ranOut}; INGEST_FIRST=off ${run.pacedWithoutYield.latencyMs.p99} ms${rate}`;
  targets.push({ target: p99Target, measured: pacedMeasured, met: rate === '' ? p99 <= 25 : null });
  const pairs = run.all.map((all, i) => `${fixed(all.requestsPerSecond)} ÷ ${fixed(run.receiver[i]!.requestsPerSecond)}`).join(', ');
  const ratioMeasured = `${withRange(run.ratios, percent).replaceAll('**', '')} (${pairs} deliveries/s); INGEST_FIRST=off ${percent(run.ratioWithoutYield)}`;
  targets.push({ target: ratioTarget, measured: ratioMeasured, met: ratio >= 0.8 });
}

function processingRows(processing: ProcessingRun[] | undefined, lines: string[], targets: Targets): void {
  for (const run of processing ?? []) {
    const settings =
      Object.keys(run.env).length === 0
        ? 'default worker settings'
        : Object.entries(run.env)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ');
    lines.push(
      `| processing | ${fixed(run.events)} events / ${fixed(run.charges)} charges backlog, ${settings} | **${fixed(run.eventsPerSecond)}** events/s | | | ${JSON.stringify(run.statuses).replaceAll('"', '')}, ${fixed(run.paymentsRefunded)}/${fixed(run.charges)} payments correct | | ${fixed(run.cpu.serverUs)} + ${run.cpu.postgresUs === null ? '?' : fixed(run.cpu.postgresUs)} (worker + PostgreSQL, per event) |`,
    );
  }
  const defaults = processing?.find((r) => Object.keys(r.env).length === 0);
  targets.push(
    defaults
      ? { target: 'processing ≥ 2,000 events/s', measured: `${fixed(defaults.eventsPerSecond)} events/s (defaults)`, met: defaults.eventsPerSecond >= 2000 }
      : { target: 'processing ≥ 2,000 events/s', measured: 'not measured in this run', met: null },
  );
}

/** The push row: events/s answered 2xx by a local consumer, and change → 2xx latency, while ingest runs. */
function forwardingRows(run: ForwardingRun | undefined, lines: string[], targets: Targets): void {
  const target = 'forwarding ≥ 1,000 events/s to a local consumer, p99 change → 2xx ≤ 1 s, while ingest runs (issue 13)';
  if (!run) {
    targets.push({ target, measured: 'not measured in this run', met: null });
    return;
  }
  lines.push(
    `| forwarding | ${fixed(run.ingestRate)} req/s ingest paced (p99 ack ${run.ingestP99Ms} ms), 1 destination | **${fixed(run.eventsPerSecond)}** events/s | ${run.latencyMs.p50} | **${run.latencyMs.p99}** | ${fixed(run.events)} events 2xx, ${run.repeats} repeats, ${run.unverified} unverified; consumer served at ${fixed(run.deliveriesPerSecond)}/s | change → 2xx | ${fixed(run.cpu.serverUs)} + ${run.cpu.postgresUs === null ? '?' : fixed(run.cpu.postgresUs)} (service + PostgreSQL, per delivered event, ingest and processing included) |`,
  );
  targets.push({
    target,
    measured: `${fixed(run.eventsPerSecond)} events/s, p99 ${run.latencyMs.p99} ms`,
    met: run.eventsPerSecond >= 1000 && run.latencyMs.p99 <= 1000,
  });
}

/**
 * The same push with a broker as the destination: published (a publisher confirm, a JetStream ack)
 * and taken off the broker by a local consumer. Beside the HTTP row, to compare the CPU each costs.
 */
function brokerForwardingRows(runs: ForwardingRun[] | undefined, lines: string[]): void {
  for (const run of runs ?? []) {
    lines.push(
      `| forwarding to ${run.destination} | ${fixed(run.ingestRate)} req/s ingest paced (p99 ack ${run.ingestP99Ms} ms), 1 destination | **${fixed(run.eventsPerSecond)}** events/s | ${run.latencyMs.p50} | **${run.latencyMs.p99}** | ${fixed(run.events)} events confirmed and consumed, ${run.repeats} repeats, ${run.unverified} unverified | change → consumer | ${fixed(run.cpu.serverUs)} + ${run.cpu.postgresUs === null ? '?' : fixed(run.cpu.postgresUs)} (service + PostgreSQL, per delivered event, ingest and processing included); the broker ${run.brokerCpuUs === undefined ? 'not measured' : fixed(run.brokerCpuUs)} |`,
    );
  }
}

/** Forwarding's capacity under a stored backlog with a modest ingest beside it: no target of its own (the target is the row above). */
function forwardingBacklogRows(run: ForwardingBacklogRun | undefined, lines: string[]): void {
  if (!run) return;
  lines.push(
    `| forwarding a backlog (capacity; not the end-to-end row) | ${fixed(run.backlogEvents)} charge.succeeded stored first, then ${fixed(run.ingestRate)} req/s ingest paced (worst p99 ack ${run.ingestP99Ms} ms), 1 destination | **${fixed(run.eventsPerSecond)}** events/s | ${run.latencyMs.p50} | **${run.latencyMs.p99}** | ${fixed(run.events)} events 2xx (${fixed(run.ingestOk)} live: p99 ${run.liveLatencyMs.p99} ms), ${run.repeats} repeats, ${run.unverified} unverified | change → 2xx | ${fixed(run.cpu.serverUs)} + ${run.cpu.postgresUs === null ? '?' : fixed(run.cpu.postgresUs)} (service + PostgreSQL, per delivered event, processing included) |`,
  );
}

function operationsRows(operations: OperationsRun[] | undefined, lines: string[]): void {
  for (const run of operations ?? []) {
    for (const timing of run.timings) {
      const indexes = [
        ...new Set(
          timing.plans
            .flatMap((p) => p.scans)
            .filter((s) => s.includes(' using '))
            .map((s) => s.replace(/.* using (\S+).*/, '$1')),
        ),
      ];
      const seq = timing.plans.some((p) => p.seqScanOfBigTable);
      const read = timing.plans.filter((p) => p.sharedBuffers !== null);
      const buffers =
        read.length > 0 ? `${fixed(read.reduce((n, p) => n + p.sharedBuffers!, 0))} shared buffers (EXPLAIN ANALYZE of its ${read.length} reads)` : '';
      const cpu = timing.postgresCpuMsPerRun !== null ? `${fixed(timing.postgresCpuMsPerRun, 1)} ms of PostgreSQL CPU a call` : '';
      lines.push(
        `| ${timing.operation} | ${fixed(run.rows)} inbox rows | | ${fixed(timing.medianMs, 1)} (median) | ${fixed(timing.maxMs, 1)} (max) | ${seq ? '**seq scan** + ' : ''}${indexes.join(', ')} | ${buffers} | ${cpu} |`,
      );
    }
    if (run.ingest) {
      const big = median(run.ingest.big.map((r) => r.requestsPerSecond));
      const empty = median(run.ingest.empty.map((r) => r.requestsPerSecond));
      const cpu = (runs: typeof run.ingest.big) =>
        `${fixed(median(runs.map((r) => r.cpu.serverUs)))} + ${fixed(median(runs.map((r) => r.cpu.postgresUs ?? 0)))}`;
      lines.push(
        `| ingest on ${fixed(run.rows)} inbox rows | ${run.ingest.connections} conns, ${run.ingest.big.length} runs alternating with an empty inbox | **${fixed(big)}** | | | ${fixed(run.ingest.big.reduce((n, r) => n + r.ok, 0))} 200s | **${fixed((big / empty) * 100)}%** of the empty inbox's ${fixed(empty)} | ${cpu(run.ingest.big)} (empty: ${cpu(run.ingest.empty)}) |`,
      );
    }
    if (run.retention) {
      const r = run.retention;
      lines.push(
        `| retention of one month (${r.partition}) | ${fixed(run.rows)} inbox rows | | | | ${fixed(r.rows)} rows archived (${fixed(r.archiveBytes / 1e6, 1)} MB), partition dropped in **${fixed(r.seconds, 1)} s** (${fixed(r.archiveWriteSeconds, 1)} s of it writing the archive) | | |`,
      );
    }
  }
}

/** Medians over the repeats; each ratio also shows its spread (min–max), which is what survives a noisy host. */
export function summarize(sections: {
  ingest?: IngestRun[];
  processing?: ProcessingRun[];
  container?: SingleContainerRun;
  forwarding?: ForwardingRun;
  forwardingBrokers?: ForwardingRun[];
  forwardingBacklog?: ForwardingBacklogRun;
  operations?: OperationsRun[];
}): Summary {
  const lines = [...HEADER];
  const targets: Targets = [];
  if (sections.ingest) ingestRows(sections.ingest, lines, targets);
  processingRows(sections.processing, lines, targets);
  containerRows(sections.container, lines, targets);
  forwardingRows(sections.forwarding, lines, targets);
  brokerForwardingRows(sections.forwardingBrokers, lines);
  forwardingBacklogRows(sections.forwardingBacklog, lines);
  operationsRows(sections.operations, lines);
  return { table: lines.join('\n'), targets };
}
