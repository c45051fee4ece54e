import type postgres from 'postgres';
import { postgresExecutor } from '../../src/db/client.ts';
import { INBOX_PARTITION_MONTHS_AHEAD, createMonthPartitionsAhead, monthPartition } from '../../src/db/inbox-partitions.ts';

const DAY_MS = 86_400_000;

/**
 * The last 30 days hold the same traffic at every size (3,300 rows a day): a bigger inbox is a
 * longer history, not a busier day. That is what makes "flat" measurable: `stats --since 24h` and
 * the sweeper see the same rows at 10^5 and 10^7, and only the table around them grows.
 */
export const RECENT_ROWS = 100_000;
const RECENT_DAYS = 30;
/** Older rows go back to the first day of the month twelve months before this one. */
const HISTORY_MONTHS = 12;
const CHUNK_ROWS = 1_000_000;

/** First instant of the month `monthsBack` months before `now`'s, UTC. */
export function monthStart(now: Date, monthsBack: number): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1));
}

/** The oldest month of the generated history: the one retention drops whole. */
export const oldestMonth = (now: Date) => monthPartition(monthStart(now, HISTORY_MONTHS));

/**
 * The month partitions a service running for a year would have made (the migration makes only the
 * current month and the ones ahead on an empty database; without these, history would pile up in
 * the default partition).
 */
export async function createHistoryPartitions(sql: postgres.Sql, now: Date): Promise<void> {
  await sql.begin((tx) => createMonthPartitionsAhead(postgresExecutor(tx), monthStart(now, HISTORY_MONTHS), HISTORY_MONTHS + INBOX_PARTITION_MONTHS_AHEAD));
}

/**
 * Rows number `from` to `to - 1`, written with SQL (generate_series) rather than through the
 * receiver, each with its dedupe key (webhook_event_keys, as ingest writes it), all providers
 * 70% Stripe, 20% Pagar.me, 10% Asaas.
 * - Rows 0 to RECENT_ROWS − 1, the last 30 days of a busy inbox: 95% processed, 4% ignored, 0.5%
 *   failed (five distinct errors), 0.5% pending — half of those with a live job, half whose job was
 *   lost — spread evenly.
 * - Every row after that, history: from the first day of the month twelve months back to 30 days
 *   ago, in time order, settled (96% processed, 4% ignored) as an operator leaves an inbox whose
 *   failures were replayed: months retention can drop whole.
 */
export async function addRows(sql: postgres.Sql, from: number, to: number, now: Date): Promise<void> {
  const recentEnd = Math.min(to, RECENT_ROWS);
  if (from < recentEnd) await addRecentRows(sql, from, recentEnd, now);
  const historyFrom = Math.max(from, RECENT_ROWS);
  const historyStart = monthStart(now, HISTORY_MONTHS).getTime();
  const historySpanMs = now.getTime() - RECENT_DAYS * DAY_MS - historyStart;
  for (let chunk = historyFrom; chunk < to; chunk += CHUNK_ROWS) {
    await sql`
      with inserted as (
        insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, fingerprint, occurred_at, received_at, status, attempts, processed_at)
        select provider, 'evt_ops_' || g, 'charge.succeeded', 'ch_ops_' || (g / 10), ${payloadSql(sql)}, ${rawBodySql(sql)}, md5(g::text),
               received - random() * interval '5 seconds', received, status, 1, received + random() * interval '2 seconds'
        from (
          select g,
                 case when g % 10 < 7 then 'stripe' when g % 10 < 9 then 'pagarme' else 'asaas' end as provider,
                 case when g % 100 < 4 then 'ignored' else 'processed' end as status,
                 ${new Date(historyStart).toISOString()}::timestamptz + make_interval(secs => ${historySpanMs / 1000}::float8 * (g - ${historyFrom}) / ${to - historyFrom}) as received
          from generate_series(${chunk}::bigint, ${Math.min(to, chunk + CHUNK_ROWS) - 1}::bigint) as g
        ) s
        returning provider, event_id, fingerprint, received_at)
      insert into webhook_event_keys (provider, event_id, fingerprint, received_at) select * from inserted`;
  }
}

async function addRecentRows(sql: postgres.Sql, from: number, to: number, now: Date): Promise<void> {
  await sql`
    with inserted as (
      insert into webhook_inbox (provider, event_id, event_type, resource_id, payload, raw_body, fingerprint, occurred_at, received_at, status, attempts, last_error, processed_at)
      select provider, 'evt_ops_' || g, 'charge.succeeded', 'ch_ops_' || (g / 10), ${payloadSql(sql)}, ${rawBodySql(sql)}, md5(g::text),
             received - random() * interval '5 seconds', received, status,
             case when status = 'pending' then 0 else 1 end,
             case when status = 'failed' then (array['PaymentNotYetKnown: charge not found', 'TypeError: cannot read amount', 'GatewayTimeout: 5000 ms', 'InvalidTransition: paid → pending', 'Error: boom'])[1 + g % 5] end,
             case when status in ('processed', 'ignored', 'failed') then received + random() * interval '2 seconds' end
      from (
        select g,
               case when g % 10 < 7 then 'stripe' when g % 10 < 9 then 'pagarme' else 'asaas' end as provider,
               case when g % 1000 < 5 then 'pending' when g % 1000 < 10 then 'failed' when g % 1000 < 50 then 'ignored' else 'processed' end as status,
               ${now.toISOString()}::timestamptz - make_interval(days => ${RECENT_DAYS}) * (1 - g::float8 / ${RECENT_ROWS}) - random() * interval '1 minute' as received
        from generate_series(${from}::bigint, ${to - 1}::bigint) as g
      ) s
      returning provider, event_id, fingerprint, received_at)
    insert into webhook_event_keys (provider, event_id, fingerprint, received_at) select * from inserted`;
}

const payloadSql = (sql: postgres.Sql) =>
  sql`jsonb_build_object('id', 'evt_ops_' || g, 'type', 'charge.succeeded', 'data', jsonb_build_object('object', jsonb_build_object('id', 'ch_ops_' || (g / 10), 'amount', 2000)))`;
const rawBodySql = (sql: postgres.Sql) => sql`convert_to('{"id":"evt_ops_' || g || '","type":"charge.succeeded"}', 'UTF8')`;
