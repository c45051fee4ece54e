import { type SQL, sql } from 'drizzle-orm';
import type { Database, Transaction } from '../../db/client.ts';
import { deliveryDestinations, deliveryLanes } from '../schema.ts';

export interface LaneFailure {
  destination: string;
  paymentId: number;
  /** The lane's delivered_sequence the run started from: the failure is recorded only if it still is. */
  deliveredSequence: number;
  /** The lane's position when its row is written here first (a lane that starts after earlier events). */
  answeredSequence: number;
  status: number | null;
  error: string;
  /** Whether it counts towards parking (not while the destination as a whole is blamed). */
  counted: boolean;
  /** The answer asked to wait (429, 503 with Retry-After): it counts only once the patience is spent. */
  throttle: boolean;
  patienceSeconds: number;
  maxAttempts: number;
  delaySeconds: number;
}

/** After the failure: parked, or when (in seconds) its retry is due. Undefined: another run moved the lane on. */
export type RecordedFailure = { parked: true; attempts: number } | { parked: false; attempts: number; throttles: number; retryInSeconds: number };

/**
 * Records a failed attempt at the lane's head event: attempts + 1 (when counted), parked at
 * maxAttempts, else the retry's time. A throttling answer within the destination's patience
 * (measured from the first one since the head event's last success) adds to `throttles` instead.
 */
export async function recordLaneFailure(db: Database | Transaction, failure: LaneFailure): Promise<RecordedFailure | undefined> {
  const patience = sql`make_interval(secs => ${failure.patienceSeconds})`;
  // Whether this answer is waited out rather than counted, from the row's throttled_since (the new row's: none yet).
  const waitedOut = (since: SQL) => sql`(${failure.throttle} and ${failure.patienceSeconds} > 0 and coalesce(${since}, now()) > now() - ${patience})`;
  const increment = (since: SQL) => sql`case when ${failure.counted} and not ${waitedOut(since)} then 1 else 0 end`;
  const throttled = (since: SQL) => sql`case when ${failure.counted} and ${waitedOut(since)} then 1 else 0 end`;
  const none = sql`null::timestamptz`;
  const [row] = await db.execute<{ attempts: number; throttles: number; parked: boolean }>(sql`
    insert into ${deliveryLanes} as l (destination, payment_id, delivered_sequence, answered_sequence, attempts, throttles, throttled_since,
      next_attempt_at, parked_at, parked_reason, last_attempt_at, last_status, last_error)
    values (${failure.destination}, ${failure.paymentId}, ${failure.deliveredSequence}, ${failure.answeredSequence}, ${increment(none)}, ${throttled(none)},
      case when ${failure.throttle} then now() end,
      case when ${increment(none)} < ${failure.maxAttempts} then now() + make_interval(secs => ${failure.delaySeconds}) end,
      case when ${increment(none)} >= ${failure.maxAttempts} then now() end,
      case when ${increment(none)} >= ${failure.maxAttempts} then ${failure.error} end,
      now(), ${failure.status}, ${failure.error})
    on conflict (destination, payment_id) do update set
      attempts = l.attempts + ${increment(sql`l.throttled_since`)},
      throttles = l.throttles + ${throttled(sql`l.throttled_since`)},
      throttled_since = case when ${failure.throttle} then coalesce(l.throttled_since, now()) else l.throttled_since end,
      next_attempt_at = case when l.attempts + ${increment(sql`l.throttled_since`)} < ${failure.maxAttempts} then now() + make_interval(secs => ${failure.delaySeconds}) end,
      parked_at = case when l.attempts + ${increment(sql`l.throttled_since`)} >= ${failure.maxAttempts} then now() end,
      parked_reason = case when l.attempts + ${increment(sql`l.throttled_since`)} >= ${failure.maxAttempts} then ${failure.error} end,
      last_attempt_at = now(), last_status = excluded.last_status, last_error = excluded.last_error, updated_at = now()
    where l.delivered_sequence = excluded.delivered_sequence and l.parked_at is null
    returning l.attempts, l.throttles, l.parked_at is not null as parked`);
  if (!row) return undefined;
  return row.parked
    ? { parked: true, attempts: row.attempts }
    : { parked: false, attempts: row.attempts, throttles: row.throttles, retryInSeconds: failure.delaySeconds };
}

/**
 * Parks a lane whose runs failed every retry, with what the last one said; the lane row may not
 * exist yet (it appears with a first answer). A lane no longer behind, or already parked, is left
 * as it is. True when it parked now.
 */
export async function parkLaneAfterFailedRuns(db: Database | Transaction, destination: string, paymentId: number, reason: string): Promise<boolean> {
  const rows = await db.execute(sql`
    insert into ${deliveryLanes} as l (destination, payment_id, delivered_sequence, answered_sequence, parked_at, parked_reason, last_attempt_at, last_error)
    select ${destination}, p.id, s.before_start, 0, now(), ${reason}, now(), ${reason}
    from payments p
    left join ${deliveryDestinations} d on d.name = ${destination}
    cross join lateral (select coalesce(max(e.sequence), 0) as before_start from payment_events e where e.payment_id = p.id and e.created_at < d.starts_at) s
    where p.id = ${paymentId} and p.event_sequence > s.before_start
    on conflict (destination, payment_id) do update set parked_at = now(), parked_reason = excluded.parked_reason, last_error = excluded.last_error, updated_at = now()
    where l.parked_at is null and l.delivered_sequence < (select p.event_sequence from payments p where p.id = l.payment_id)
    returning 1`);
  return rows.length > 0;
}

/**
 * Lanes of the destination whose head event is failing now (not parked), throttled ones included:
 * many at once means the destination is down, or limiting everything it is sent.
 */
export async function countFailingLanes(db: Database | Transaction, destination: string, atLeast: number): Promise<number> {
  const [row] = await db.execute<{ n: number }>(sql`
    select count(*)::int as n from (
      select 1 from ${deliveryLanes} where destination = ${destination} and (attempts > 0 or throttles > 0) and parked_at is null limit ${atLeast}) as failing`);
  return row?.n ?? 0;
}

/**
 * Starts (or extends) the destination's backoff, unless another instance already did for this
 * round. Returns the seconds it backs off from now, or undefined when it was already backing off.
 */
export async function startDestinationBackoff(
  db: Database | Transaction,
  destination: string,
  delaySeconds: (trips: number) => number,
  trips: number,
): Promise<number | undefined> {
  const seconds = delaySeconds(trips + 1);
  const rows = await db.execute(sql`
    insert into ${deliveryDestinations} as d (name, backoff_until, backoff_trips) values (${destination}, now() + make_interval(secs => ${seconds}), 1)
    on conflict (name) do update set backoff_until = excluded.backoff_until, backoff_trips = d.backoff_trips + 1, updated_at = now()
    where d.backoff_until is null or d.backoff_until <= now()
    returning 1`);
  return rows.length > 0 ? seconds : undefined;
}

/**
 * The probe got a 2xx: the destination is back. Its backoff ends, and the lanes that failed while
 * it was down are forgiven and due now; their payment ids are returned so each gets a job.
 */
export async function endDestinationBackoff(db: Database | Transaction, destination: string): Promise<number[]> {
  const ended = await db.execute(sql`
    update ${deliveryDestinations} set backoff_until = null, backoff_trips = 0, updated_at = now()
    where name = ${destination} and backoff_trips > 0 returning 1`);
  if (ended.length === 0) return [];
  const lanes = await db.execute<{ payment_id: string }>(sql`
    update ${deliveryLanes} set attempts = 0, throttles = 0, throttled_since = null, next_attempt_at = null, updated_at = now()
    where destination = ${destination} and (attempts > 0 or throttles > 0) and parked_at is null
    returning payment_id`);
  return lanes.map((r) => Number(r.payment_id));
}

/** Where a lane stands when its row is first written: past the events from before its destination's start. */
export interface LanePosition {
  deliveredSequence: number;
  answeredSequence: number;
}

/**
 * The lane exists, so `inboxctl lanes enable` finds its backlog: a run that met a disabled
 * destination (or its 410) sent nothing, and no later change may come to queue it again.
 */
export async function noteLaneHeld(
  db: Database | Transaction,
  destination: string,
  paymentId: number,
  at: LanePosition,
  answer?: { status: number; error: string },
): Promise<void> {
  const row = sql`${destination}, ${paymentId}, ${at.deliveredSequence}, ${at.answeredSequence}`;
  if (!answer) {
    await db.execute(sql`insert into ${deliveryLanes} (destination, payment_id, delivered_sequence, answered_sequence) values (${row}) on conflict do nothing`);
    return;
  }
  await db.execute(sql`
    insert into ${deliveryLanes} as l (destination, payment_id, delivered_sequence, answered_sequence, last_attempt_at, last_status, last_error)
    values (${row}, now(), ${answer.status}, ${answer.error})
    on conflict (destination, payment_id) do update set last_attempt_at = now(), last_status = excluded.last_status, last_error = excluded.last_error, updated_at = now()`);
}

/** 410 Gone: no lane of the destination is tried again until an operator enables it. */
export async function disableDestination(db: Database | Transaction, destination: string, reason: string): Promise<boolean> {
  const rows = await db.execute(sql`
    insert into ${deliveryDestinations} as d (name, disabled_at, disabled_reason) values (${destination}, now(), ${reason})
    on conflict (name) do update set disabled_at = now(), disabled_reason = excluded.disabled_reason, updated_at = now()
    where d.disabled_at is null
    returning 1`);
  return rows.length > 0;
}
