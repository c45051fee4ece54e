import type postgres from 'postgres';
import { type CpuSplit, measureCpu } from '../support/cpu.ts';
import { type DurableRun, describeDurableRun, measureDurableRun } from '../support/durable-run.ts';
import { INGEST_LEVELS, type IngestLevel, loadAtLevel } from '../support/levels.ts';
import { type LoadResult, runLoad } from '../support/load.ts';
import { BENCH_SECRET, type Started, startBaseline, startInbox, startPeer, startSeedPeer } from '../support/services.ts';
import { signedDeliveries } from '../support/signed-events.ts';

export { INGEST_LEVELS, type IngestLevel };

export interface IngestRun {
  repeat: number;
  level: IngestLevel;
  baseline: LoadResult & { cpu: CpuSplit };
  /** The obvious implementation of the same design on the inbox's own schema (bench/peer/peer-server.ts), on a database of its own. */
  peer: DurableRun;
  /** The same on the seed's one table (bench/peer/seed-peer-server.ts), on a database of its own. */
  seedPeer: DurableRun;
  inbox: DurableRun;
  /** inbox req/s ÷ baseline req/s, from adjacent runs. */
  ratio: number;
  /** inbox req/s ÷ peer req/s, from adjacent runs. */
  peerRatio: number;
  /** inbox req/s ÷ seed-style peer req/s, from adjacent runs. */
  seedPeerRatio: number;
}

interface Database {
  url: string;
  sql: postgres.Sql;
}

function deliveryBatches() {
  let batch = 0;
  return (amount: number, connections: number, target: string) => {
    batch += 1;
    const prefix = `evt_bench_${target}_${batch}_`;
    return { prefix, requests: signedDeliveries(prefix, amount + 2 * connections, BENCH_SECRET) };
  };
}

function logLine(run: IngestRun): string {
  const { baseline: base, peer, seedPeer, inbox } = run;
  return (
    `  ingest #${run.repeat} ${run.level.name.padEnd(8)} baseline ${base.requestsPerSecond.toFixed(0).padStart(6)} req/s p99 ${base.latencyMs.p99} ms | ` +
    `peer ${describeDurableRun(peer)} | seed peer ${describeDurableRun(seedPeer)} | inbox ${describeDurableRun(inbox)}, ` +
    `${(inbox.ok / Math.max(1, inbox.database.commits)).toFixed(1)} events/commit, ${(inbox.ok / Math.max(1, inbox.database.walSyncs)).toFixed(1)} events/WAL sync | ` +
    `CPU µs/request: inbox ${inbox.cpu.serverUs} + PostgreSQL ${inbox.cpu.postgresUs ?? '?'} + load ${inbox.cpu.loadGeneratorUs}, ` +
    `peer ${peer.cpu.serverUs} + ${peer.cpu.postgresUs ?? '?'} + ${peer.cpu.loadGeneratorUs}, seed peer ${seedPeer.cpu.serverUs} + ${seedPeer.cpu.postgresUs ?? '?'} + ${seedPeer.cpu.loadGeneratorUs}, ` +
    `baseline ${base.cpu.serverUs} + load ${base.cpu.loadGeneratorUs} | ` +
    `inbox ÷ baseline ${(run.ratio * 100).toFixed(0)}%, inbox ÷ peer ${run.peerRatio.toFixed(2)}×, inbox ÷ seed peer ${run.seedPeerRatio.toFixed(2)}×` +
    `${inbox.senderLagMsP99 !== undefined ? ` | sender lag p99 ${inbox.senderLagMsP99} / ${peer.senderLagMsP99} / ${base.senderLagMsP99} ms` : ''}`
  );
}

/**
 * Baseline, the two peers and inbox run one after the other at each level, so each ratio comes
 * from adjacent runs on the same (noisy) machine. All four servers stay up for the whole matrix;
 * only one is loaded at a time. The peers and the inbox each have a fresh database on the same
 * cluster.
 */
export async function runIngest(options: {
  inboxDatabase: Database;
  peerDatabase: Database;
  seedPeerDatabase: Database;
  repeats: number;
  /** Service settings beyond INBOX_ROLE=receiver (tuning runs only). */
  env: Record<string, string>;
  /** Only these levels (by name); all by default. */
  levels?: string[];
  /** When known, PostgreSQL's CPU is counted too. */
  postmasterPid?: number;
  log: (line: string) => void;
}): Promise<IngestRun[]> {
  const started: Started[] = [];
  const runs: IngestRun[] = [];
  const deliveriesFor = deliveryBatches();
  try {
    const baseline = await startBaseline();
    started.push(baseline);
    const peer = await startPeer(options.peerDatabase.url);
    started.push(peer);
    const seedPeer = await startSeedPeer(options.seedPeerDatabase.url);
    started.push(seedPeer);
    const inbox = await startInbox(options.inboxDatabase.url, { INBOX_ROLE: 'receiver', ...options.env });
    started.push(inbox);
    // Warm them up (JIT, pools, prepared statements); not reported.
    const warmUp = (server: Started, amount: number, name: string) =>
      runLoad({ baseUrl: server.baseUrl, requests: deliveriesFor(amount, 16, name).requests, connections: 16, amount, maxSeconds: 120 });
    await warmUp(baseline, 10_000, 'baseline');
    await warmUp(peer, 2_000, 'peer');
    await warmUp(seedPeer, 2_000, 'seedpeer');
    await warmUp(inbox, 3_000, 'inbox');
    const durable = (server: Started, database: Database, level: IngestLevel, amount: number, name: string) =>
      measureDurableRun({
        target: { baseUrl: server.baseUrl, pid: server.process.pid, sql: database.sql },
        level,
        amount,
        deliveries: deliveriesFor(amount, level.connections, name),
        postmasterPid: options.postmasterPid,
      });
    for (let repeat = 1; repeat <= options.repeats; repeat += 1) {
      for (const level of INGEST_LEVELS.filter((l) => !options.levels || options.levels.includes(l.name))) {
        const baselineCpu = measureCpu(baseline.process.pid, options.postmasterPid);
        const baseLoad = await loadAtLevel(
          baseline.baseUrl,
          level,
          level.baselineAmount,
          deliveriesFor(level.baselineAmount, level.connections, 'baseline').requests,
        );
        const base = { ...baseLoad, cpu: baselineCpu(baseLoad.ok) };
        const peerRun = await durable(peer, options.peerDatabase, level, level.peerAmount, 'peer');
        const seedPeerRun = await durable(seedPeer, options.seedPeerDatabase, level, level.peerAmount, 'seedpeer');
        const inboxRun = await durable(inbox, options.inboxDatabase, level, level.amount, 'inbox');
        const run: IngestRun = {
          repeat,
          level,
          baseline: base,
          peer: peerRun,
          seedPeer: seedPeerRun,
          inbox: inboxRun,
          ratio: inboxRun.requestsPerSecond / base.requestsPerSecond,
          peerRatio: inboxRun.requestsPerSecond / peerRun.requestsPerSecond,
          seedPeerRatio: inboxRun.requestsPerSecond / seedPeerRun.requestsPerSecond,
        };
        runs.push(run);
        options.log(logLine(run));
      }
    }
  } finally {
    for (const server of started) await server.process.stop();
  }
  return runs;
}
