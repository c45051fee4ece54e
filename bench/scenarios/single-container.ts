import type { BenchDatabaseServer } from '../support/database.ts';
import { loadBacklog, pendingBacklog } from '../support/backlog.ts';
import { type DurableRun, describeDurableRun, measureDurableRun } from '../support/durable-run.ts';
import { type IngestLevel, levelNamed } from '../support/levels.ts';
import { runLoad } from '../support/load.ts';
import { BENCH_SECRET, startInbox } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';

/** Event ids of the backlog are `evt_backlog_…`; the deliveries sent during a phase are `evt_bench_container_…`. */
const BACKLOG_PREFIX = 'backlog_';

export interface BacklogDrain {
  /** Backlog events still pending right before and right after the load. */
  pendingAtStart: number;
  pendingAtEnd: number;
  /** Backlog events processed during the load, per second of it. */
  eventsPerSecond: number;
  /** The backlog was gone before the load ended: the run's tail was not measured under a backlog. */
  ranOut: boolean;
}

export interface ContainerPhase extends DurableRun {
  role: 'all' | 'receiver';
  /** INGEST_FIRST: whether the all role's workers yield to its receiver (the product's default: on). */
  ingestFirst: boolean;
  level: IngestLevel;
  backlog: BacklogDrain;
}

export interface SingleContainerRun {
  backlogEvents: number;
  charges: number;
  /**
   * INBOX_ROLE=all (receiver and workers in one process) at a paced BENCH_CONTAINER_RATE (1,000 req/s)
   * while the backlog drains, once per repeat: one run's p99 swings with the machine's minute.
   */
  paced: ContainerPhase[];
  /** The same with INGEST_FIRST=off, once: what the workers cost ingest when they never yield. */
  pacedWithoutYield: ContainerPhase;
  /**
   * 64 connections on the same backlog, once per repeat: the receiver role (its workers would be
   * elsewhere), then at once the all role; receiver[i] and all[i] are adjacent runs.
   */
  receiver: ContainerPhase[];
  all: ContainerPhase[];
  /** The all role with INGEST_FIRST=off, once, right after the last repeat's all. */
  allWithoutYield: ContainerPhase;
  /** all[i] ÷ receiver[i], deliveries/s: each ratio from adjacent runs. */
  ratios: number[];
  /** allWithoutYield ÷ the last receiver. */
  ratioWithoutYield: number;
}

/**
 * Enough to get the service's hot paths compiled; kept short because the all role's workers drain
 * the backlog meanwhile (~3,000 events/s on a quiet 2-core machine), and the run should start with
 * most of it left. Both roles get the same warm-up, so their ratio compares like with like.
 */
const WARM_UP_REQUESTS = 1_000;

/**
 * One phase on its own copy of the backlog database: start the service in `role`, warm it up,
 * then at once one ingest run at `level`, counting the backlog's pending events right before and
 * right after it.
 */
async function runPhase(options: {
  server: BenchDatabaseServer;
  template: string;
  role: 'all' | 'receiver';
  ingestFirst: boolean;
  /** Service settings of every phase (tuning runs). */
  env: Record<string, string>;
  level: IngestLevel;
  phase: number;
  postmasterPid?: number;
}): Promise<ContainerPhase> {
  const { role, level, ingestFirst } = options;
  const database = await options.server.createDatabase(`container_${role}`, { template: options.template });
  const service = await startInbox(database.url, { ...options.env, INBOX_ROLE: role, INGEST_FIRST: ingestFirst ? 'on' : 'off' }, `container-${role}`);
  const deliveries = (amount: number, purpose: string) => {
    const prefix = `evt_bench_container_${options.phase}_${purpose}_`;
    return { prefix, requests: signedDeliveries(prefix, amount + 2 * level.connections, BENCH_SECRET) };
  };
  try {
    await runLoad({
      baseUrl: service.baseUrl,
      requests: deliveries(WARM_UP_REQUESTS, 'warmup').requests,
      connections: 16,
      amount: WARM_UP_REQUESTS,
      maxSeconds: 120,
    });
    const { probe, ...run } = await measureDurableRun({
      target: { baseUrl: service.baseUrl, pid: service.process.pid, sql: database.sql },
      level,
      amount: level.amount,
      deliveries: deliveries(level.amount, level.name),
      postmasterPid: options.postmasterPid,
      probe: () => pendingBacklog(database.sql, BACKLOG_PREFIX),
      settleFirst: false,
    });
    const drain = {
      pendingAtStart: probe!.before,
      pendingAtEnd: probe!.after,
      eventsPerSecond: (probe!.before - probe!.after) / run.seconds,
      ranOut: probe!.after === 0,
    };
    return { ...run, role, ingestFirst, level, backlog: drain };
  } finally {
    await service.process.stop();
  }
}

function describePhase(phase: ContainerPhase): string {
  const { backlog } = phase;
  return (
    `  single container: ${phase.role.padEnd(8)} ${phase.role === 'all' ? `ingest first ${phase.ingestFirst ? 'on ' : 'off'} ` : ''}${phase.level.name.padEnd(8)} ${describeDurableRun(phase)} | ` +
    `backlog pending ${backlog.pendingAtStart} → ${backlog.pendingAtEnd} (${backlog.eventsPerSecond.toFixed(0)} events/s drained${backlog.ranOut ? ', RAN OUT before the load ended' : ''}) | ` +
    `CPU µs/request: service ${phase.cpu.serverUs} + PostgreSQL ${phase.cpu.postgresUs ?? '?'} + load ${phase.cpu.loadGeneratorUs}`
  );
}

/**
 * The default deployment, one container running receiver and workers (`INBOX_ROLE=all`), while a
 * backlog drains: a backlog is loaded once as the processing row does (and analyzed), and every
 * phase gets an identical copy of it (CREATE DATABASE … TEMPLATE), so the receiver and all roles
 * at 64 connections are compared on the same state, one right after the other.
 */
export async function runSingleContainer(options: {
  server: BenchDatabaseServer;
  charges: number;
  pacedLevel: IngestLevel;
  /** BENCH_CONTAINER_ENV: service settings for every phase (tuning runs: WORKER_YIELD_PAUSE_MS=100,…). */
  env: Record<string, string>;
  postmasterPid?: number;
  /** BENCH_REPEATS: how many times the paced all run and the receiver/all pair at 64 connections run. */
  repeats: number;
  log: (line: string) => void;
}): Promise<SingleContainerRun> {
  const template = await options.server.createDatabase('backlog');
  const loaded = await loadBacklog({ databaseUrl: template.url, sql: template.sql, charges: options.charges, prefix: BACKLOG_PREFIX, env: {} });
  await template.sql.end({ timeout: 5 });
  options.log(
    `  backlog: ${loaded.events} events over ${options.charges} charges stored with their jobs in ${loaded.seconds.toFixed(1)} s; each phase runs on a copy`,
  );
  const phase = async (number: number, role: 'all' | 'receiver', level: IngestLevel, ingestFirst = true) => {
    const result = await runPhase({
      server: options.server,
      template: template.name,
      role,
      ingestFirst,
      env: options.env,
      level,
      phase: number,
      postmasterPid: options.postmasterPid,
    });
    options.log(describePhase(result));
    return result;
  };
  // The repeats alternate the roles, so a slow minute of the machine falls on both of a pair rather
  // than on one; the summary reports medians with their range, as the ingest rows do. The
  // INGEST_FIRST=off phases run once, in the last repeat, each beside its counterpart.
  const paced: ContainerPhase[] = [];
  const receiver: ContainerPhase[] = [];
  const all: ContainerPhase[] = [];
  let number = 0;
  const next = () => (number += 1);
  let pacedWithoutYield: ContainerPhase | undefined;
  let allWithoutYield: ContainerPhase | undefined;
  for (let repeat = 1; repeat <= options.repeats; repeat += 1) {
    const last = repeat === options.repeats;
    paced.push(await phase(next(), 'all', options.pacedLevel));
    if (last) pacedWithoutYield = await phase(next(), 'all', options.pacedLevel, false);
    receiver.push(await phase(next(), 'receiver', levelNamed('c64')));
    all.push(await phase(next(), 'all', levelNamed('c64')));
    if (last) allWithoutYield = await phase(next(), 'all', levelNamed('c64'), false);
  }
  if (!pacedWithoutYield || !allWithoutYield) throw new Error('the single-container section needs at least one repeat');
  return {
    backlogEvents: loaded.events,
    charges: options.charges,
    paced,
    pacedWithoutYield,
    receiver,
    all,
    allWithoutYield,
    ratios: all.map((phase, i) => phase.requestsPerSecond / receiver[i]!.requestsPerSecond),
    ratioWithoutYield: allWithoutYield.requestsPerSecond / receiver.at(-1)!.requestsPerSecond,
  };
}

/** The paced level of the single-container phases: 10 s at `rate` (BENCH_CONTAINER_RATE, 1,000 req/s by default) through at most 64 connections. */
export function containerPacedLevel(rate: number): IngestLevel {
  return { ...levelNamed('rate1000'), name: `rate${rate}`, rate, amount: rate * 10 };
}
