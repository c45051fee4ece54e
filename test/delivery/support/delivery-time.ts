import type postgres from 'postgres';

/**
 * What `seconds` of waiting does to the push side, without the wait. Its waits are deadlines in the
 * database on the clock every instance shares (src/delivery/delivery-timers.ts says why): a lane's
 * next_attempt_at and throttled_since, a destination's backoff_until, and the start_after of the
 * deliveries jobs pg-boss holds back for them. Moving them all `seconds` earlier, in one
 * transaction, is time passing for every rule that reads them; nothing else changes. The service
 * sees due jobs at its next poll.
 */
export async function passDeliveryTime(sql: postgres.Sql, seconds: number): Promise<void> {
  const by = sql`make_interval(secs => ${seconds})`;
  await sql.begin(async (tx) => {
    await tx`update delivery_lanes set next_attempt_at = next_attempt_at - ${by}, throttled_since = throttled_since - ${by}
      where next_attempt_at is not null or throttled_since is not null`;
    await tx`update delivery_destinations set backoff_until = backoff_until - ${by} where backoff_until is not null`;
    await tx`update pgboss.job set start_after = start_after - ${by} where name in ('deliveries', 'delivery-seeds') and state in ('created', 'retry') and start_after > now()`;
  });
}

/**
 * Nothing of the push side is running or due now: every deliveries job has ended or waits for a
 * later time. What a test checks between two passes of time.
 */
export async function deliveriesSettled(sql: postgres.Sql): Promise<boolean> {
  const [row] = await sql`
    select count(*)::int as busy from pgboss.job
    where name in ('deliveries', 'delivery-seeds') and (state = 'active' or (state in ('created', 'retry') and start_after <= now()))`;
  return row!.busy === 0;
}

/** Seconds until the latest wait of the push side ends (0 when none is pending). */
export async function secondsToLastDeadline(sql: postgres.Sql): Promise<number> {
  const [row] = await sql`
    select greatest(0, extract(epoch from max(start_after) - now()))::float8 as seconds from pgboss.job
    where name = 'deliveries' and state in ('created', 'retry')`;
  return Math.ceil(row!.seconds ?? 0);
}
