import { type LoadResult, runLoad } from './load.ts';
import { runPacedLoad } from './paced-load.ts';
import type { SignedRequest } from './signed-events.ts';

export interface IngestLevel {
  name: string;
  connections: number;
  /** Requests sent to the inbox; the baseline gets more (it answers ~10× faster), so both runs last seconds. */
  amount: number;
  baselineAmount: number;
  /** The peer answers ~3–4× slower than the inbox: fewer requests keep its closed-loop runs to seconds. */
  peerAmount: number;
  rate?: number;
}

/**
 * Concurrency 1, 16, 64 as fast as answers come (autocannon, closed loop), then a fixed 1,000
 * req/s for latency (paced open loop, at most 64 connections: see paced-load.ts for why not
 * autocannon's rate option). A paced run lasts amount ÷ rate for everyone, so all three get 10,000.
 */
export const INGEST_LEVELS: IngestLevel[] = [
  { name: 'c1', connections: 1, amount: 2_000, baselineAmount: 15_000, peerAmount: 1_000 },
  { name: 'c16', connections: 16, amount: 10_000, baselineAmount: 60_000, peerAmount: 4_000 },
  { name: 'c64', connections: 64, amount: 20_000, baselineAmount: 60_000, peerAmount: 8_000 },
  { name: 'rate1000', connections: 64, amount: 10_000, baselineAmount: 10_000, peerAmount: 10_000, rate: 1_000 },
];

export function levelNamed(name: string): IngestLevel {
  const level = INGEST_LEVELS.find((l) => l.name === name);
  if (!level) throw new Error(`no ingest level ${name}`);
  return level;
}

/** One run at a level: closed loop through autocannon, or paced when the level has a rate. */
export function loadAtLevel(baseUrl: string, level: IngestLevel, amount: number, requests: SignedRequest[]): Promise<LoadResult> {
  if (level.rate) return runPacedLoad({ baseUrl, requests, rate: level.rate, amount, connections: level.connections });
  return runLoad({ baseUrl, requests, connections: level.connections, amount, maxSeconds: 180 });
}
