import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SettledStatus } from '../db/schema.ts';
import { rejectedMoneyKinds } from '../domain/payments/event-decision.ts';

/**
 * Every metric the inbox exports is defined here, in one registry per service instance (never
 * prom-client's global one: tests run several services in one process). Components receive the
 * narrow facade they need (`DeliveryMetrics`, `ProcessingMetrics`, …) through their deps.
 */

/** What a delivery's answer meant. Statuses stay numeric so the label matches the HTTP answer. */
export type DeliveryOutcome = 'accepted' | 'duplicate' | '400' | '401' | '404' | '413' | '500' | '503';

export interface DeliveryMetrics {
  delivery(provider: string, outcome: DeliveryOutcome, ackSeconds: number): void;
  /** A duplicate (also counted as one) whose meaning differs from the stored event: its body went to webhook_inbox_conflicts. */
  conflictingDuplicate(provider: string): void;
  /** An event named a gateway account the configuration does not know: counted once per (provider, account) per process. */
  unknownAccount(provider: string): void;
}

export interface ProcessingMetrics {
  /** One job run against one inbox row, whatever its result. */
  attempt(provider: string): void;
  /** An attempt that threw; `errorClass` is a stable code or error name, never a message. */
  failure(provider: string, errorClass: string): void;
  /** The row was processed or ignored; received → now is the processing latency, retries included. */
  settled(provider: string, status: SettledStatus, receivedAt: Date, now: Date): void;
  /** A refund, dispute, chargeback or cancellation of a paid payment the payments fold refused (decision rejected_transition or rejected_amount), once committed. */
  rejectedMoneyEvent(provider: string, kind: string): void;
}

/** How the workers of an `all` process give way to its receiver (src/processing/ingest-first.ts). */
export interface IngestFirstMetrics {
  /** One transaction's worth of events applied: whole, `keeping_pace` while acks were slow, `yielding` while the receiver was saturated. */
  applied(mode: IngestFirstApplyMode, events: number): void;
  /** A worker waited `seconds` for the receiver before applying a slice. */
  paused(seconds: number): void;
  /** The pressure gauge reads this at each scrape (the receiver's meter; none: always 0). */
  readPressureFrom(read: () => IngestPressureLevel): void;
}

export type IngestFirstApplyMode = 'full' | 'keeping_pace' | 'yielding';

/** The receiver's level as src/inbox/ingest-pressure.ts names it (spelled out: observability imports nothing above it). */
type IngestPressureLevel = 'quiet' | 'slow' | 'saturated';
const PRESSURE_VALUE: Record<IngestPressureLevel, number> = { quiet: 0, slow: 1, saturated: 2 };

export type RefetchOutcome = 'ok' | 'not_found' | 'rate_limited' | 'error' | 'breaker_open' | 'retry_after';
export type BreakerState = 'closed' | 'half_open' | 'open';

export interface RefetchMetrics {
  call(provider: string, outcome: RefetchOutcome, seconds: number): void;
  breakerState(provider: string, state: BreakerState): void;
}

export interface OperationsMetrics {
  sweeperRun(outcome: 'ok' | 'error', requeued: number): void;
  /** `deleted`: rows removed (archived first when an archive folder is configured), per provider. */
  retentionRun(outcome: 'ok' | 'error', counts: readonly { provider: string; deleted: number }[]): void;
}

/** Payment events pushed to destinations (src/delivery). */
export interface ForwardingMetrics {
  /** A 2xx; `latencySeconds` runs from the payment change (payment_events.created_at) to it. */
  delivered(destination: string, latencySeconds: number): void;
  /** `reason`: the HTTP status, `no_answer` (timeout, refused, hung up) or `gone` (410). */
  failedAttempt(destination: string, reason: string): void;
}

export interface Metrics {
  registry: Registry;
  forwarding: ForwardingMetrics;
  delivery: DeliveryMetrics;
  processing: ProcessingMetrics;
  ingestFirst: IngestFirstMetrics;
  refetch: RefetchMetrics;
  operations: OperationsMetrics;
  /** The gauges the periodic database refresh sets (see inbox-gauges.ts). */
  gauges: DatabaseGauges;
}

export interface DatabaseGauges {
  inboxEvents: Gauge<'provider' | 'status'>;
  inboxEventsLastHour: Gauge<'provider' | 'status'>;
  oldestPendingAge: Gauge<'provider'>;
  lastDelivery: Gauge<'provider'>;
  queueJobs: Gauge<'queue' | 'state'>;
  refreshTimestamp: Gauge;
  refreshFailures: Counter;
  parkedLanes: Gauge<'destination'>;
  destinationDisabled: Gauge<'destination'>;
  reconciliationFindingsOpen: Gauge<'provider' | 'kind'>;
  reconciliationLastCompleteRun: Gauge<'provider'>;
  unconfiguredDestinationParkedLanes: Gauge<'destination'>;
}

// Acks are bounded by COMMIT_DEADLINE_MS (5 s by default); buckets resolve the group-commit range.
const ACK_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Processing latency runs from milliseconds (idle) to the retry schedule's ~15 min steps and beyond.
const PROCESSING_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86_400];
// A yielding worker applies WORKER_YIELD_BATCH_SIZE (10) at a time, a full one up to WORKER_BATCH_SIZE (100, at most 500).
const BATCH_EVENTS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];
const REFETCH_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Payment change → 2xx: tens of milliseconds when flowing, the retry schedule's minutes and hours when not.
const FORWARDING_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 3600, 86_400];

export const BREAKER_STATE_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

export interface MetricsOptions {
  defaultMetrics?: boolean;
  /**
   * The configured providers: their counters of rare events start at 0, so `increase()` sees the
   * first one (a series born at 1 has no earlier sample to increase from).
   */
  providers?: Iterable<string>;
  /** The configured destinations, for the same reason. */
  destinations?: Iterable<string>;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // Read once: the caller may hand an iterator (a Map's keys), and more than one counter starts at 0 per provider.
  const providers = [...(options.providers ?? [])];

  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries by provider and outcome (accepted, duplicate, or the HTTP status of a rejection).',
    labelNames: ['provider', 'outcome'],
    registers,
  });
  const ackDuration = new Histogram({
    name: 'webhook_ack_duration_seconds',
    help: 'Time from receiving a delivery to sending its answer (for 200: after COMMIT).',
    labelNames: ['provider', 'outcome'],
    buckets: ACK_BUCKETS,
    registers,
  });
  const conflictingDuplicates = new Counter({
    name: 'webhook_conflicting_duplicates_total',
    help: 'Duplicate deliveries (200, not processed) whose meaning differs from the stored event of their id, by provider; kept in webhook_inbox_conflicts.',
    labelNames: ['provider'],
    registers,
  });
  for (const provider of providers) conflictingDuplicates.inc({ provider }, 0);
  const unknownAccounts = new Counter({
    name: 'inbox_unknown_accounts_total',
    help: 'Gateway accounts named by stored events that the configuration does not know (connect, knownAccounts), each counted once per process, by provider; the events are stored and folded as usual.',
    labelNames: ['provider'],
    registers,
  });
  for (const provider of providers) unknownAccounts.inc({ provider }, 0);
  const attempts = new Counter({
    name: 'inbox_processing_attempts_total',
    help: 'Processing attempts (job runs against an inbox row) by provider.',
    labelNames: ['provider'],
    registers,
  });
  const failures = new Counter({
    name: 'inbox_processing_failures_total',
    help: 'Processing attempts that threw, by provider and error class (retried until attempts run out).',
    labelNames: ['provider', 'error_class'],
    registers,
  });
  const settled = new Counter({
    name: 'inbox_events_settled_total',
    help: 'Inbox rows a handler processed or ignored, by provider and status.',
    labelNames: ['provider', 'status'],
    registers,
  });
  const processingLatency = new Histogram({
    name: 'inbox_processing_latency_seconds',
    help: 'From received_at to processed or ignored, retries included.',
    labelNames: ['provider', 'status'],
    buckets: PROCESSING_BUCKETS,
    registers,
  });
  const rejectedMoney = new Counter({
    name: 'inbox_rejected_money_events_total',
    help: 'Refunds, disputes, chargebacks and cancellations of paid payments the payments fold refused (decision rejected_transition, e.g. a dispute of a refunded charge, or rejected_amount, a refund of more than the amount), by provider and canonical kind: someone must look.',
    labelNames: ['provider', 'kind'],
    registers,
  });
  for (const provider of providers) for (const kind of rejectedMoneyKinds) rejectedMoney.inc({ provider, kind }, 0);
  const batchEvents = new Histogram({
    name: 'inbox_worker_batch_events',
    help: 'Events a worker applied in one transaction, by mode: full, or yielding to the receiver of its process (ingest first).',
    labelNames: ['mode'],
    buckets: BATCH_EVENTS_BUCKETS,
    registers,
  });
  const yieldPauses = new Counter({ name: 'inbox_worker_yield_pauses_total', help: 'Pauses workers took for the receiver of their process (ingest first).', registers });
  const yieldSeconds = new Counter({ name: 'inbox_worker_yield_seconds_total', help: 'Time workers spent paused for the receiver of their process.', registers });
  let readPressure: () => IngestPressureLevel = () => 'quiet';
  new Gauge({
    name: 'inbox_ingest_pressure',
    help: 'The receiver of this process: 0 quiet, 1 acks slow (its workers keep pace with arrivals), 2 saturated (its workers yield).',
    registers,
    collect() {
      this.set(PRESSURE_VALUE[readPressure()]);
    },
  });
  const refetchCalls = new Counter({
    name: 'inbox_refetch_calls_total',
    help: 'Gateway API calls that fetch a resource\'s true state, by provider and outcome.',
    labelNames: ['provider', 'outcome'],
    registers,
  });
  const refetchDuration = new Histogram({
    name: 'inbox_refetch_duration_seconds',
    help: 'Duration of gateway API refetch calls.',
    labelNames: ['provider'],
    buckets: REFETCH_BUCKETS,
    registers,
  });
  const breaker = new Gauge({
    name: 'inbox_refetch_breaker_state',
    help: 'Refetch circuit breaker per provider: 0 closed, 1 half-open, 2 open.',
    labelNames: ['provider'],
    registers,
  });
  const sweeperRuns = new Counter({
    name: 'inbox_sweeper_runs_total',
    help: 'Sweeper runs by outcome.',
    labelNames: ['outcome'],
    registers,
  });
  const sweeperRequeued = new Counter({
    name: 'inbox_sweeper_requeued_events_total',
    help: 'Pending rows the sweeper re-enqueued.',
    registers,
  });
  const sweeperLastRun = new Gauge({
    name: 'inbox_sweeper_last_run_timestamp_seconds',
    help: 'When this instance last finished a sweeper run (Unix time).',
    registers,
  });
  const retentionRuns = new Counter({
    name: 'inbox_retention_runs_total',
    help: 'Retention runs by outcome.',
    labelNames: ['outcome'],
    registers,
  });
  const retentionDeleted = new Counter({
    name: 'inbox_retention_deleted_events_total',
    help: 'Rows the retention job deleted (after archiving them, when archiving is on), by provider.',
    labelNames: ['provider'],
    registers,
  });
  const retentionLastRun = new Gauge({
    name: 'inbox_retention_last_run_timestamp_seconds',
    help: 'When this instance last finished a retention run (Unix time).',
    registers,
  });

  const forwarded = new Counter({
    name: 'inbox_destination_deliveries_total',
    help: 'Payment events a destination answered 2xx, by destination.',
    labelNames: ['destination'],
    registers,
  });
  const forwardFailures = new Counter({
    name: 'inbox_destination_failed_attempts_total',
    help: 'POSTs of payment events that got no 2xx, by destination and reason (HTTP status, no_answer, gone).',
    labelNames: ['destination', 'reason'],
    registers,
  });
  const forwardLatency = new Histogram({
    name: 'inbox_destination_delivery_latency_seconds',
    help: 'From the payment change (payment_events.created_at) to the 2xx of the destination, retries included.',
    labelNames: ['destination'],
    buckets: FORWARDING_BUCKETS,
    registers,
  });
  for (const destination of options.destinations ?? []) forwarded.inc({ destination }, 0);

  const gauges: DatabaseGauges = {
    inboxEvents: new Gauge({
      name: 'inbox_events',
      help: 'Inbox rows now pending or failed, by provider and status (from the database; same on every instance).',
      labelNames: ['provider', 'status'],
      registers,
    }),
    inboxEventsLastHour: new Gauge({
      name: 'inbox_events_received_last_hour',
      help: 'Inbox rows received in the last hour, by provider and current status (from the database; same on every instance).',
      labelNames: ['provider', 'status'],
      registers,
    }),
    oldestPendingAge: new Gauge({
      name: 'inbox_oldest_pending_age_seconds',
      help: 'Age of the oldest pending row per provider; 0 when none is pending (from the database).',
      labelNames: ['provider'],
      registers,
    }),
    lastDelivery: new Gauge({
      name: 'inbox_last_delivery_timestamp_seconds',
      help: "When the provider's newest webhook delivery was received (Unix time; backfilled rows do not count). No series before its first delivery (from the database).",
      labelNames: ['provider'],
      registers,
    }),
    queueJobs: new Gauge({
      name: 'pgboss_queue_jobs',
      help: "pg-boss jobs per queue and state, from pg-boss's own counts (refreshed by its monitor about once a minute).",
      labelNames: ['queue', 'state'],
      registers,
    }),
    refreshTimestamp: new Gauge({
      name: 'inbox_metrics_refreshed_timestamp_seconds',
      help: 'When the database-derived gauges were last refreshed (Unix time).',
      registers,
    }),
    refreshFailures: new Counter({
      name: 'inbox_metrics_refresh_failures_total',
      help: 'Failed refreshes of the database-derived gauges.',
      registers,
    }),
    parkedLanes: new Gauge({
      name: 'inbox_delivery_lanes_parked',
      help: 'Lanes (destination, payment) parked after their last attempt, waiting for inboxctl lanes retry | skip (from the database).',
      labelNames: ['destination'],
      registers,
    }),
    destinationDisabled: new Gauge({
      name: 'inbox_destination_disabled',
      help: '1 when the destination answered 410 Gone and is disabled, else 0 (from the database).',
      labelNames: ['destination'],
      registers,
    }),
    reconciliationFindingsOpen: new Gauge({
      name: 'inbox_reconciliation_findings_open',
      help: 'Open reconciliation findings (payments and ledger entries that disagree), by provider and kind (from the database).',
      labelNames: ['provider', 'kind'],
      registers,
    }),
    reconciliationLastCompleteRun: new Gauge({
      name: 'inbox_reconciliation_last_complete_run_timestamp_seconds',
      help: 'When the last complete reconciliation run of the provider finished (Unix time; from the database).',
      labelNames: ['provider'],
      registers,
    }),
    unconfiguredDestinationParkedLanes: new Gauge({
      name: 'inbox_unconfigured_destination_parked_lanes',
      help: 'Parked lanes of a destination this instance is not configured with, which the database still holds: retire it (inboxctl lanes retire) or configure it again (from the database).',
      labelNames: ['destination'],
      registers,
    }),
  };

  return {
    registry,
    gauges,
    forwarding: {
      delivered(destination, latencySeconds) {
        forwarded.inc({ destination });
        forwardLatency.observe({ destination }, Math.max(0, latencySeconds));
      },
      failedAttempt: (destination, reason) => forwardFailures.inc({ destination, reason }),
    },
    delivery: {
      delivery(provider, outcome, ackSeconds) {
        deliveries.inc({ provider, outcome });
        ackDuration.observe({ provider, outcome }, ackSeconds);
      },
      conflictingDuplicate: (provider) => conflictingDuplicates.inc({ provider }),
      unknownAccount: (provider) => unknownAccounts.inc({ provider }),
    },
    processing: {
      attempt: (provider) => attempts.inc({ provider }),
      failure: (provider, errorClass) => failures.inc({ provider, error_class: errorClass }),
      settled(provider, status, receivedAt, now) {
        settled.inc({ provider, status });
        processingLatency.observe({ provider, status }, Math.max(0, (now.getTime() - receivedAt.getTime()) / 1000));
      },
      rejectedMoneyEvent: (provider, kind) => rejectedMoney.inc({ provider, kind }),
    },
    ingestFirst: {
      applied: (mode, events) => batchEvents.observe({ mode }, events),
      paused(seconds) {
        yieldPauses.inc();
        yieldSeconds.inc(seconds);
      },
      readPressureFrom(read) {
        readPressure = read;
      },
    },
    refetch: {
      call(provider, outcome, seconds) {
        refetchCalls.inc({ provider, outcome });
        if (outcome !== 'breaker_open' && outcome !== 'retry_after') refetchDuration.observe({ provider }, seconds);
      },
      breakerState: (provider, state) => breaker.set({ provider }, BREAKER_STATE_VALUE[state]),
    },
    operations: {
      sweeperRun(outcome, requeued) {
        sweeperRuns.inc({ outcome });
        sweeperRequeued.inc(requeued);
        sweeperLastRun.setToCurrentTime();
      },
      retentionRun(outcome, counts) {
        retentionRuns.inc({ outcome });
        for (const { provider, deleted } of counts) retentionDeleted.inc({ provider }, deleted);
        retentionLastRun.setToCurrentTime();
      },
    },
  };
}
