import { sql } from 'drizzle-orm';
import type { Database, SqlExecutor, Transaction } from '../../db/client.ts';
import type { PaymentEventRow } from '../../domain/payments/schema.ts';
import type { PaymentStatus } from '../../domain/payments/payment-fact.ts';
import { type DeliveryJobData, laneKey } from '../deliveries-queue.ts';

// A batch of lanes binds as ONE JSON parameter: one statement per batch, whatever its size, and
// the same statement text every time. The lane statements run prepared (postgresExecutor): one round
// trip with no parse or plan, where drizzle's execute() takes two and plans afresh. The events read
// does not: prepared, it took 11–15 ms of execution a batch against 3–4.5 ms planned afresh
// (forwarding bench, 20,000 events, two runs each, load 5–8; a generic plan is the likely cause).

/** What a delivery run needs to know before it sends anything, all by the database's clock. */
export interface LaneState {
  deliveredSequence: number;
  /** The last event the destination answered 2xx: what the next event sent `follows`. */
  answeredSequence: number;
  attempts: number;
  /** Answers that asked to wait, not counted as attempts (the destination's patience). */
  throttles: number;
  parked: boolean;
  /** A retry is scheduled later than now: a run before it leaves the lane alone. */
  waiting: boolean;
  destinationDisabled: boolean;
  /** Seconds until the destination's backoff ends; 0 when it is not backing off. */
  destinationBackoffSeconds: number;
  /** Backoffs in a row without a 2xx: above 0, this run's POST is the destination's probe. */
  destinationBackoffTrips: number;
}

/**
 * Each lane's state, in the order given. A lane without a row yet starts where its destination
 * starts: past the payment's events written before the destination's starts_at (none when null).
 */
export async function readLaneStates(db: SqlExecutor, lanes: readonly DeliveryJobData[]): Promise<LaneState[]> {
  if (lanes.length === 0) return [];
  const input = JSON.stringify(lanes.map((lane, ord) => ({ ord, destination: lane.destination, payment_id: lane.paymentId })));
  const { rows } = await db.executeSql<{
    ord: number;
    delivered_sequence: number;
    answered_sequence: number;
    attempts: number | null;
    throttles: number | null;
    parked: boolean | null;
    waiting: boolean | null;
    disabled: boolean | null;
    backoff_seconds: number | null;
    backoff_trips: number | null;
  }>(
    `select v.ord, coalesce(l.delivered_sequence, s.before_start) as delivered_sequence,
           coalesce(l.answered_sequence, l.delivered_sequence, 0) as answered_sequence, l.attempts, l.throttles,
           l.parked_at is not null as parked, l.next_attempt_at > now() as waiting,
           d.disabled_at is not null as disabled, extract(epoch from d.backoff_until - now())::float8 as backoff_seconds, d.backoff_trips
    from jsonb_to_recordset($1::text::jsonb) as v(ord int, destination varchar, payment_id bigint)
    left join delivery_lanes as l on l.destination = v.destination and l.payment_id = v.payment_id
    left join delivery_destinations as d on d.name = v.destination
    cross join lateral (select coalesce(max(e.sequence), 0) as before_start from payment_events e
      where l.destination is null and e.payment_id = v.payment_id and e.created_at < d.starts_at) as s`,
    [input],
  );
  const states = new Array<LaneState>(lanes.length);
  for (const row of rows) {
    states[row.ord] = {
      deliveredSequence: row.delivered_sequence,
      answeredSequence: row.answered_sequence,
      attempts: row.attempts ?? 0,
      throttles: row.throttles ?? 0,
      parked: row.parked === true,
      waiting: row.waiting === true,
      destinationDisabled: row.disabled === true,
      destinationBackoffSeconds: Math.max(0, row.backoff_seconds ?? 0),
      destinationBackoffTrips: row.backoff_trips ?? 0,
    };
  }
  return states;
}

export interface LaneRead {
  paymentId: number;
  afterSequence: number;
}

type EventRecord = {
  ord: number;
  id: string;
  position: number;
  txid: string;
  payment_id: number;
  sequence: number;
  provider: string;
  gateway_charge_id: string;
  status: PaymentStatus;
  previous_status: PaymentStatus | null;
  amount: number | null;
  amount_refunded: number;
  currency: string | null;
  account: string | null;
  inquiry_open: boolean;
  split: PaymentEventRow['split'];
  occurred_ms: number;
  cause_inbox_id: number;
  cause_event_id: string;
  cause_event_type: string;
  created_ms: number;
};

/**
 * For each lane, its next `limit` events after `afterSequence`, oldest first. A payment's
 * sequence has no gaps, so "the next n" is a range of the (payment_id, sequence) index: each lane
 * is one index range scan, whatever the table's size.
 */
export async function readLanesEvents(db: Database | Transaction, reads: readonly LaneRead[], limit: number): Promise<PaymentEventRow[][]> {
  const events = reads.map((): PaymentEventRow[] => []);
  if (reads.length === 0) return events;
  const input = JSON.stringify(reads.map((read, ord) => ({ ord, payment_id: read.paymentId, after: read.afterSequence })));
  const rows = await db.execute<EventRecord>(sql`
    select v.ord, e.id, e.position::float8 as position, e.txid::text as txid, e.payment_id::float8 as payment_id, e.sequence,
           e.provider, e.gateway_charge_id, e.status, e.previous_status, e.amount::float8 as amount, e.amount_refunded::float8 as amount_refunded,
           e.currency, e.account, e.inquiry_open, e.split, (extract(epoch from e.occurred_at) * 1000)::float8 as occurred_ms, e.cause_inbox_id::float8 as cause_inbox_id,
           e.cause_event_id, e.cause_event_type, (extract(epoch from e.created_at) * 1000)::float8 as created_ms
    from jsonb_to_recordset(${input}::jsonb) as v(ord int, payment_id bigint, after int)
    join payment_events as e on e.payment_id = v.payment_id and e.sequence > v.after and e.sequence <= v.after + ${limit}
    order by v.ord, e.sequence`);
  for (const row of rows) {
    events[row.ord]!.push({
      id: row.id,
      position: row.position,
      txid: row.txid,
      paymentId: row.payment_id,
      sequence: row.sequence,
      provider: row.provider,
      gatewayChargeId: row.gateway_charge_id,
      account: row.account,
      status: row.status,
      previousStatus: row.previous_status,
      amount: row.amount,
      amountRefunded: row.amount_refunded,
      currency: row.currency,
      inquiryOpen: row.inquiry_open,
      split: row.split,
      occurredAt: new Date(row.occurred_ms),
      causeInboxId: row.cause_inbox_id,
      causeEventId: row.cause_event_id,
      causeEventType: row.cause_event_type,
      createdAt: new Date(row.created_ms),
    });
  }
  return events;
}

export interface LaneProgress {
  destination: string;
  paymentId: number;
  /** The last event answered 2xx (or not for this destination) in order. */
  deliveredSequence: number;
  /** The last event answered 2xx (the run's, or the lane's before it when the run sent none). */
  answeredSequence: number;
  /** The last 2xx's status; null when no event of the run was for this destination. */
  status: number | null;
}

/**
 * The lanes moved on to these sequences: their failures are forgiven. Only forwards: a lane already
 * at or past its sequence (a run that outlived its expiry beside its successor) is left alone and
 * missing from the answer, and its run stops. Written in key order, so two batches that share a
 * lane (an operator's command, an expired run) wait for each other instead of deadlocking.
 */
export async function markLanesDelivered(db: SqlExecutor, progress: readonly LaneProgress[]): Promise<Set<string>> {
  if (progress.length === 0) return new Set();
  const input = JSON.stringify(
    progress.map((p) => ({
      destination: p.destination,
      payment_id: p.paymentId,
      delivered_sequence: p.deliveredSequence,
      answered_sequence: p.answeredSequence,
      last_status: p.status,
    })),
  );
  const { rows } = await db.executeSql<{ destination: string; payment_id: number }>(
    `insert into delivery_lanes as l (destination, payment_id, delivered_sequence, answered_sequence, last_attempt_at, last_status)
    select v.destination, v.payment_id, v.delivered_sequence, v.answered_sequence, now(), v.last_status
    from jsonb_to_recordset($1::text::jsonb) as v(destination varchar, payment_id bigint, delivered_sequence int, answered_sequence int, last_status smallint)
    order by v.destination, v.payment_id
    on conflict (destination, payment_id) do update set
      delivered_sequence = excluded.delivered_sequence, answered_sequence = excluded.answered_sequence,
      attempts = 0, throttles = 0, throttled_since = null, next_attempt_at = null,
      last_attempt_at = now(), last_status = coalesce(excluded.last_status, l.last_status), last_error = null, updated_at = now()
    where l.delivered_sequence < excluded.delivered_sequence
    returning l.destination, l.payment_id::float8 as payment_id`,
    [input],
  );
  return new Set(rows.map((r) => laneKey(r.destination, Number(r.payment_id))));
}
