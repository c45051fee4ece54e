import { sql } from 'drizzle-orm';
import type { Executor } from '../../db/client.ts';

export interface LagPercentiles {
  events: number;
  p50Seconds: number | undefined;
  p99Seconds: number | undefined;
}

export interface ProviderLag {
  provider: string;
  lastHour: LagPercentiles;
  lastDay: LagPercentiles;
}

type LagRow = {
  provider: string;
  hour_events: number;
  hour_p50: number | null;
  hour_p99: number | null;
  day_events: number;
  day_p50: number | null;
  day_p99: number | null;
};

/**
 * Processing lag (received_at → processed_at) percentiles per provider for rows received in the
 * last hour and day that reached processed or ignored. One pass over the day's rows, through the
 * (status, received_at) index; the hour is a FILTER on the same pass.
 */
export async function selectProcessingLag(db: Executor, now: Date): Promise<ProviderLag[]> {
  const hourAgo = new Date(now.getTime() - 3600_000).toISOString();
  const dayAgo = new Date(now.getTime() - 86_400_000).toISOString();
  const lag = sql`extract(epoch from processed_at - received_at)`;
  const rows = await db.execute<LagRow>(sql`
    select provider,
           count(*) filter (where received_at >= ${hourAgo}::timestamptz)::int as hour_events,
           percentile_cont(0.5) within group (order by ${lag}) filter (where received_at >= ${hourAgo}::timestamptz) as hour_p50,
           percentile_cont(0.99) within group (order by ${lag}) filter (where received_at >= ${hourAgo}::timestamptz) as hour_p99,
           count(*)::int as day_events,
           percentile_cont(0.5) within group (order by ${lag}) as day_p50,
           percentile_cont(0.99) within group (order by ${lag}) as day_p99
    from webhook_inbox
    where status in ('processed', 'ignored') and received_at >= ${dayAgo}::timestamptz and processed_at is not null
    group by provider`);
  const percentiles = (events: number, p50: number | null, p99: number | null): LagPercentiles => ({
    events,
    p50Seconds: p50 ?? undefined,
    p99Seconds: p99 ?? undefined,
  });
  return rows.map((r) => ({
    provider: r.provider,
    lastHour: percentiles(r.hour_events, r.hour_p50, r.hour_p99),
    lastDay: percentiles(r.day_events, r.day_p50, r.day_p99),
  }));
}
