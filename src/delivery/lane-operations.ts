import { sql } from 'drizzle-orm';
import type { PgBoss } from 'pg-boss';
import type { Database, Transaction } from '../db/client.ts';
import { enqueueLaneJobs } from './enqueue-deliveries.ts';
import { deliveryDestinations, deliveryLanes } from './schema.ts';
import { CodedError } from '../errors.ts';

/** What an operator is told about one lane. */
export interface LaneView {
  destination: string;
  provider: string;
  chargeId: string;
  /** The payment's gateway account (payments.account); null for a direct integration. */
  account: string | null;
  paymentId: number;
  deliveredSequence: number;
  /** The payment's last event: the lane is caught up when deliveredSequence reaches it. */
  lastSequence: number;
  attempts: number;
  parkedAt: Date | null;
  parkedReason: string | null;
  nextAttemptAt: Date | null;
  lastStatus: number | null;
  lastError: string | null;
  skippedEvents: number;
  lastSkipReason: string | null;
}

export interface DestinationView {
  name: string;
  disabledAt: Date | null;
  disabledReason: string | null;
  backoffUntil: Date | null;
  parkedLanes: number;
  /** Lanes with events still to deliver (parked ones included). */
  behindLanes: number;
  /** When the oldest payment event not yet answered 2xx there was written (its lag); null when none waits. */
  oldestUndeliveredAt: Date | null;
}

/** The lanes that need a look: parked, failing, or behind. Caught-up lanes are not listed. */
export async function listLanes(db: Database | Transaction, options: { parkedOnly: boolean; limit: number; account?: string }): Promise<LaneView[]> {
  const ofAccount = options.account === undefined ? sql`` : sql`and p.account = ${options.account}`;
  const rows = await db.execute<Record<string, unknown>>(sql`
    select l.destination, p.provider, p.gateway_charge_id, p.account, l.payment_id, l.delivered_sequence, p.event_sequence, l.attempts,
           l.parked_at, l.parked_reason, l.next_attempt_at, l.last_status, l.last_error, l.skipped_events, l.last_skip_reason
    from ${deliveryLanes} as l join payments as p on p.id = l.payment_id
    where (l.parked_at is not null ${options.parkedOnly ? sql`` : sql`or l.attempts > 0 or l.delivered_sequence < p.event_sequence`}) ${ofAccount}
    order by l.parked_at nulls last, l.destination, l.payment_id
    limit ${options.limit}`);
  const date = (value: unknown) => (value === null ? null : new Date(value as string));
  return rows.map((r) => ({
    destination: r.destination as string,
    provider: r.provider as string,
    chargeId: r.gateway_charge_id as string,
    account: r.account as string | null,
    paymentId: Number(r.payment_id),
    deliveredSequence: r.delivered_sequence as number,
    lastSequence: r.event_sequence as number,
    attempts: r.attempts as number,
    parkedAt: date(r.parked_at),
    parkedReason: r.parked_reason as string | null,
    nextAttemptAt: date(r.next_attempt_at),
    lastStatus: r.last_status as number | null,
    lastError: r.last_error as string | null,
    skippedEvents: r.skipped_events as number,
    lastSkipReason: r.last_skip_reason as string | null,
  }));
}

/** Each named destination's state and lane counts (the behind count walks the lanes of that destination). */
export async function describeDestinations(db: Database | Transaction, names: readonly string[]): Promise<DestinationView[]> {
  if (names.length === 0) return [];
  const rows = await db.execute<Record<string, unknown>>(sql`
    select n.name, d.disabled_at, d.disabled_reason, case when d.backoff_until > now() then d.backoff_until end as backoff_until,
           (select count(*) from ${deliveryLanes} l where l.destination = n.name and l.parked_at is not null)::int as parked,
           behind.lanes as behind, behind.oldest as oldest_undelivered_at
    from unnest(array[${sql.join(
      names.map((name) => sql`${name}`),
      sql`, `,
    )}]::text[]) as n(name)
    left join ${deliveryDestinations} as d on d.name = n.name
    cross join lateral (
      select count(*)::int as lanes, min(e.created_at) as oldest
      from ${deliveryLanes} l join payments p on p.id = l.payment_id
      left join payment_events e on e.payment_id = l.payment_id and e.sequence = l.delivered_sequence + 1
      where l.destination = n.name and l.delivered_sequence < p.event_sequence) as behind
    order by n.name`);
  return rows.map((r) => ({
    name: r.name as string,
    disabledAt: r.disabled_at === null ? null : new Date(r.disabled_at as string),
    disabledReason: r.disabled_reason as string | null,
    backoffUntil: r.backoff_until === null ? null : new Date(r.backoff_until as string),
    parkedLanes: r.parked as number,
    behindLanes: r.behind as number,
    oldestUndeliveredAt: r.oldest_undelivered_at === null ? null : new Date(r.oldest_undelivered_at as string),
  }));
}

export class LaneNotFoundError extends CodedError {
  readonly code = 'lane_not_found';
  constructor(destination: string, provider: string, chargeId: string) {
    super(`No lane of destination "${destination}" for payment ${provider}:${chargeId} (no event of it was tried there yet).`);
  }
}

export class LaneNotParkedError extends CodedError {
  readonly code = 'lane_not_parked';
  constructor(destination: string, provider: string, chargeId: string) {
    super(`The lane of destination "${destination}" for ${provider}:${chargeId} is not parked: only a parked lane's head event can be skipped.`);
  }
}

export interface LaneRef {
  destination: string;
  provider: string;
  chargeId: string;
}

export interface LaneDeps {
  db: Database;
  boss: PgBoss;
}

/** Carries a dry run's answer out of the transaction it rolls back. */
class DryRunRollback<T> extends Error {
  readonly result: T;
  constructor(result: T) {
    super('dry run: rolled back');
    this.result = result;
  }
}

/**
 * The operator's change in one transaction; on a dry run the same statements run (the same locks,
 * checks and refusals, the jobs inserted) and the transaction is rolled back, so what it says it
 * would do is what the real run does.
 */
export async function changeInTransaction<T>(deps: LaneDeps, options: LaneChangeOptions, work: (tx: Transaction) => Promise<T>): Promise<T> {
  try {
    return await deps.db.transaction(async (tx) => {
      const result = await work(tx);
      if (options.dryRun) throw new DryRunRollback(result);
      return result;
    });
  } catch (error) {
    if (error instanceof DryRunRollback) return error.result as T;
    throw error;
  }
}

export interface LaneChangeOptions {
  /** Run the change and roll it back: nothing changes, no job is queued. */
  dryRun?: boolean;
}

/** The lane's row, locked for the operator's change; the lane must exist. */
async function lockLane(
  tx: Database | Transaction,
  lane: LaneRef,
): Promise<{ paymentId: number; parked: boolean; deliveredSequence: number; lastSequence: number }> {
  const [found] = await tx.execute<{ payment_id: string; parked: boolean; delivered_sequence: number; event_sequence: number }>(sql`
    select l.payment_id, l.parked_at is not null as parked, l.delivered_sequence, p.event_sequence from ${deliveryLanes} as l join payments as p on p.id = l.payment_id
    where p.provider = ${lane.provider} and p.gateway_charge_id = ${lane.chargeId} and l.destination = ${lane.destination}
    for update of l`);
  if (!found) throw new LaneNotFoundError(lane.destination, lane.provider, lane.chargeId);
  return { paymentId: Number(found.payment_id), parked: found.parked, deliveredSequence: found.delivered_sequence, lastSequence: found.event_sequence };
}

/** Unparks the lane (attempts from zero) and queues a run now; a waiting retry is pulled forward too. */
export async function retryLane(
  deps: LaneDeps,
  lane: LaneRef,
  options: LaneChangeOptions = {},
): Promise<{ wasParked: boolean; deliveredSequence: number; lastSequence: number }> {
  return changeInTransaction(deps, options, async (tx) => {
    const found = await lockLane(tx, lane);
    await tx.execute(sql`
      update ${deliveryLanes} set parked_at = null, parked_reason = null, attempts = 0, throttles = 0, throttled_since = null, next_attempt_at = null, updated_at = now()
      where destination = ${lane.destination} and payment_id = ${found.paymentId}`);
    await enqueueLaneJobs(deps.boss, tx, [{ destination: lane.destination, paymentId: found.paymentId }]);
    return { wasParked: found.parked, deliveredSequence: found.deliveredSequence, lastSequence: found.lastSequence };
  });
}

/**
 * Gives up on a parked lane's head event (the destination will never take it): the lane moves past
 * it, the reason is kept on the lane, and the events after it are sent. The event stays in the
 * outbox and the feed. answered_sequence stays where it was, so the next event sent says it follows
 * the one before the skipped event (`follows_sequence`), and the application applies it.
 */
export async function skipLaneEvent(
  deps: LaneDeps,
  lane: LaneRef,
  reason: string,
  options: LaneChangeOptions = {},
): Promise<{ skippedSequence: number; eventId: string }> {
  return changeInTransaction(deps, options, async (tx) => {
    const found = await lockLane(tx, lane);
    if (!found.parked) throw new LaneNotParkedError(lane.destination, lane.provider, lane.chargeId);
    const { paymentId } = found;
    const skipped = found.deliveredSequence + 1;
    const [event] = await tx.execute<{ id: string }>(sql`select id from payment_events where payment_id = ${paymentId} and sequence = ${skipped}`);
    await tx.execute(sql`
      update ${deliveryLanes} set delivered_sequence = ${skipped}, answered_sequence = coalesce(answered_sequence, delivered_sequence),
        parked_at = null, parked_reason = null, attempts = 0, throttles = 0, throttled_since = null, next_attempt_at = null,
        skipped_events = skipped_events + 1, last_skip_reason = ${reason}, last_skipped_at = now(), updated_at = now()
      where destination = ${lane.destination} and payment_id = ${paymentId}`);
    await enqueueLaneJobs(deps.boss, tx, [{ destination: lane.destination, paymentId }]);
    return { skippedSequence: skipped, eventId: event?.id ?? '' };
  });
}

/**
 * Takes a disabled (410) destination back and queues its backlog: every lane with events left
 * (a run that met the disabled destination left its lane behind, see noteLaneHeld).
 */
export async function enableDestination(
  deps: LaneDeps,
  destination: string,
  options: LaneChangeOptions = {},
): Promise<{ wasDisabled: boolean; lanesQueued: number }> {
  return changeInTransaction(deps, options, async (tx) => {
    const enabled = await tx.execute(sql`
      update ${deliveryDestinations} set disabled_at = null, disabled_reason = null, updated_at = now()
      where name = ${destination} and disabled_at is not null returning 1`);
    if (enabled.length === 0) return { wasDisabled: false, lanesQueued: 0 };
    const lanes = await tx.execute<{ payment_id: string }>(sql`
      select l.payment_id from ${deliveryLanes} as l join payments as p on p.id = l.payment_id
      where l.destination = ${destination} and l.delivered_sequence < p.event_sequence and l.parked_at is null`);
    await enqueueLaneJobs(
      deps.boss,
      tx,
      lanes.map((r) => ({ destination, paymentId: Number(r.payment_id) })),
    );
    return { wasDisabled: true, lanesQueued: lanes.length };
  });
}
