import type { SqlExecutor } from '../../db/client.ts';
import { settledStatuses, SETTLED_STATUS_LIST } from './settled.ts';
import { Values, where } from './statement.ts';

/**
 * The one definition of lag, for `inboxctl stats` and the dashboard alike. Processing lag is
 * received → settled, over settled events (processed or ignored, settled.ts): what an operator
 * means by "how long does an event wait", since an ignored event waited in the same queue and went
 * through the same worker as a processed one. Counting only processed events would hide the wait
 * of a provider whose events are mostly ignored, and let the two faces disagree for one hour.
 */
const PROCESSING_LAG = 'extract(epoch from processed_at - received_at)';
/** How late the gateway sent (received − occurred); a gateway clock ahead of ours is 0, not negative. */
const INGEST_LAG = 'greatest(0, extract(epoch from received_at - occurred_at))';
/** processed_at is set with the status; a row restored from an archive without it has no lag to give. */
const HAS_SETTLED = 'processed_at is not null';

export interface LagSample {
  /** Settled events in the sample. */
  n: number;
  /** p50, p95, p99 in seconds; null when the sample is empty. */
  ingest: number[] | null;
  ingestMax: number | null;
  processing: number[] | null;
  processingMax: number | null;
}

/**
 * Lag percentiles over the most recent `sampleSize` settled events received since `since`: one
 * backward walk of the (status, received_at) index per settled status, each stopping after the
 * sample, however large the window; the newest `sampleSize` of both are kept.
 */
export async function sampleSettledLag(db: SqlExecutor, filter: { provider?: string; account?: string; since?: Date }, sampleSize: number): Promise<LagSample> {
  const values = new Values();
  const limit = values.add(sampleSize);
  const provider = filter.provider ? `provider = ${values.add(filter.provider)}` : undefined;
  const account = filter.account ? `account = ${values.add(filter.account)}` : undefined;
  const since = filter.since ? `received_at >= ${values.add(filter.since.toISOString())}::timestamptz` : undefined;
  const walks = settledStatuses.map(
    (status) => `(select received_at, occurred_at, processed_at from webhook_inbox
       ${where([`status = '${status}'`, HAS_SETTLED, provider, account, since])}
       order by received_at desc limit ${limit})`,
  );
  const { rows } = await db.executeSql<{
    n: number;
    ingest: number[] | null;
    ingest_max: number | string | null;
    processing: number[] | null;
    processing_max: number | string | null;
  }>(
    `with recent as (
       select * from (${walks.join(' union all ')}) settled order by received_at desc limit ${limit}
     ), lags as (
       select ${INGEST_LAG} as ingest, ${PROCESSING_LAG} as processing from recent
     )
     select count(*)::int as n,
            percentile_cont(array[0.5, 0.95, 0.99]) within group (order by ingest) as ingest, max(ingest)::float8 as ingest_max,
            percentile_cont(array[0.5, 0.95, 0.99]) within group (order by processing) as processing, max(processing)::float8 as processing_max
     from lags`,
    values.list,
  );
  const row = rows[0]!;
  return {
    n: row.n,
    ingest: row.ingest,
    ingestMax: row.ingest_max === null ? null : Number(row.ingest_max),
    processing: row.processing,
    processingMax: row.processing_max === null ? null : Number(row.processing_max),
  };
}

export interface LagInWindow {
  /** Settled events received in the window. */
  events: number;
  p50Seconds: number | undefined;
  p99Seconds: number | undefined;
}

export interface ProviderLag {
  provider: string;
  lastHour: LagInWindow;
  lastDay: LagInWindow;
}

/**
 * Processing lag p50/p99 per provider for every settled event received in the last hour and day.
 * One pass over the day's rows, through the (status, received_at) index; the hour is a FILTER on
 * the same pass.
 */
export async function settledLagByProvider(db: SqlExecutor, now: Date): Promise<ProviderLag[]> {
  const hourAgo = new Date(now.getTime() - 3600_000).toISOString();
  const dayAgo = new Date(now.getTime() - 86_400_000).toISOString();
  const { rows } = await db.executeSql<{
    provider: string;
    hour_events: number;
    hour_p50: number | null;
    hour_p99: number | null;
    day_events: number;
    day_p50: number | null;
    day_p99: number | null;
  }>(
    `select provider,
            count(*) filter (where received_at >= $1::timestamptz)::int as hour_events,
            percentile_cont(0.5) within group (order by ${PROCESSING_LAG}) filter (where received_at >= $1::timestamptz) as hour_p50,
            percentile_cont(0.99) within group (order by ${PROCESSING_LAG}) filter (where received_at >= $1::timestamptz) as hour_p99,
            count(*)::int as day_events,
            percentile_cont(0.5) within group (order by ${PROCESSING_LAG}) as day_p50,
            percentile_cont(0.99) within group (order by ${PROCESSING_LAG}) as day_p99
     from webhook_inbox
     where status in (${SETTLED_STATUS_LIST}) and received_at >= $2::timestamptz and ${HAS_SETTLED}
     group by provider`,
    [hourAgo, dayAgo],
  );
  const window = (events: number, p50: number | null, p99: number | null): LagInWindow => ({
    events,
    p50Seconds: p50 ?? undefined,
    p99Seconds: p99 ?? undefined,
  });
  return rows.map((r) => ({
    provider: r.provider,
    lastHour: window(r.hour_events, r.hour_p50, r.hour_p99),
    lastDay: window(r.day_events, r.day_p50, r.day_p99),
  }));
}
