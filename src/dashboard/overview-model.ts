import type { ActivityRow, BacklogCount } from '../inbox/sql/counts.ts';
import type { ConflictCount } from '../inbox/sql/conflicts.ts';
import type { LagInWindow, ProviderLag } from '../inbox/sql/lag.ts';
import type { StatusCounts } from '../inbox/sql/counts.ts';
import { type ChartBucket, chartStatuses, totalOf } from './views/bar-chart.ts';

export const HOUR_BUCKET_SECONDS = 300;
export const DAY_BUCKET_SECONDS = 3600;
const HOUR_BUCKETS = 12;
const DAY_BUCKETS = 24;

export interface WindowSummary {
  counts: StatusCounts;
  received: number;
  /** Ignored ÷ received; undefined when nothing was received. A sudden rise means the gateway changed something. */
  ignoredRatio: number | undefined;
  buckets: ChartBucket[];
}

export interface ProviderSummary {
  provider: string;
  lastHour: WindowSummary;
  lastDay: WindowSummary;
  pendingNow: number;
  failedNow: number;
  oldestPendingSeconds: number | undefined;
  lag: { lastHour: LagInWindow; lastDay: LagInWindow };
  /** Duplicates received in the last 24 h that said something else than their stored event. */
  conflictsLastDay: number;
}

const emptyCounts = (): StatusCounts => ({ processed: 0, ignored: 0, pending: 0, failed: 0 });
const noLag: LagInWindow = { events: 0, p50Seconds: undefined, p99Seconds: undefined };

/** Bucket starts (Unix seconds) of the last `count` buckets, the current partial one last. */
export function bucketStarts(now: Date, bucketSeconds: number, count: number): number[] {
  const current = Math.floor(now.getTime() / 1000 / bucketSeconds) * bucketSeconds;
  return Array.from({ length: count }, (_, i) => current - (count - 1 - i) * bucketSeconds);
}

/** The conflicting duplicates the overview counts: the last 24 hours. */
export function conflictsSince(now: Date): Date {
  return new Date(now.getTime() - 86_400_000);
}

/** Where the activity query must start so both charts are full. */
export function activitySince(now: Date): Date {
  return new Date(bucketStarts(now, DAY_BUCKET_SECONDS, DAY_BUCKETS)[0]! * 1000);
}

function windowSummary(rows: ActivityRow[], starts: number[], bucketSeconds: number): WindowSummary {
  const byStart = new Map(starts.map((start) => [start, emptyCounts()]));
  for (const row of rows) {
    const counts = byStart.get(Math.floor(row.bucket / bucketSeconds) * bucketSeconds);
    if (counts && (chartStatuses as readonly string[]).includes(row.status)) counts[row.status] += row.events;
  }
  const counts = emptyCounts();
  for (const bucket of byStart.values()) for (const status of chartStatuses) counts[status] += bucket[status];
  const received = totalOf(counts);
  return {
    counts,
    received,
    ignoredRatio: received === 0 ? undefined : counts.ignored / received,
    buckets: starts.map((start) => ({ start: new Date(start * 1000), counts: byStart.get(start)! })),
  };
}

export interface OverviewInput {
  now: Date;
  providers: Iterable<string>;
  activity: ActivityRow[];
  lag: ProviderLag[];
  backlog: BacklogCount[];
  /** Conflicting duplicates per provider since `conflictsSince(now)`. */
  conflicts: ConflictCount[];
}

/** Per provider (configured ones first, then any other name found in the inbox): the overview's figures. */
export function summarizeProviders(input: OverviewInput): ProviderSummary[] {
  const names = new Set(input.providers);
  for (const row of [...input.activity, ...input.backlog, ...input.conflicts]) names.add(row.provider);
  const hourStarts = bucketStarts(input.now, HOUR_BUCKET_SECONDS, HOUR_BUCKETS);
  const dayStarts = bucketStarts(input.now, DAY_BUCKET_SECONDS, DAY_BUCKETS);
  return [...names].map((provider) => {
    const rows = input.activity.filter((r) => r.provider === provider);
    const backlog = input.backlog.filter((r) => r.provider === provider);
    const pending = backlog.find((r) => r.status === 'pending');
    const lag = input.lag.find((r) => r.provider === provider);
    return {
      provider,
      lastHour: windowSummary(rows, hourStarts, HOUR_BUCKET_SECONDS),
      lastDay: windowSummary(rows, dayStarts, DAY_BUCKET_SECONDS),
      pendingNow: pending?.events ?? 0,
      failedNow: backlog.find((r) => r.status === 'failed')?.events ?? 0,
      oldestPendingSeconds: pending?.oldestAgeSeconds,
      lag: { lastHour: lag?.lastHour ?? noLag, lastDay: lag?.lastDay ?? noLag },
      conflictsLastDay: input.conflicts.find((r) => r.provider === provider)?.count ?? 0,
    };
  });
}
