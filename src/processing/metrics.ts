import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SettledStatus } from '../db/schema.ts';
import { rejectedMoneyKinds } from '../domain/payments/event-decision.ts';
import type { IngestPressureLevel } from '../inbox/ingest-pressure.ts';

/**
 * The workers' metrics: processing attempts and their outcomes, and how the workers of an `all`
 * process give way to its receiver. Composed into one registry by src/observability/metrics.ts.
 */

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

const PRESSURE_VALUE: Record<IngestPressureLevel, number> = { quiet: 0, slow: 1, saturated: 2 };

// Processing latency runs from milliseconds (idle) to the retry schedule's ~15 min steps and beyond.
const PROCESSING_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86_400];
// A yielding worker applies WORKER_YIELD_BATCH_SIZE (10) at a time, a full one up to WORKER_BATCH_SIZE (100, at most 500).
const BATCH_EVENTS_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/** `providers`: the configured ones, whose rejected-money counters start at 0 (so `increase()` sees the first). */
export function declareProcessingMetrics(registers: Registry[], providers: readonly string[]): ProcessingMetrics {
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
  return {
    attempt: (provider) => attempts.inc({ provider }),
    failure: (provider, errorClass) => failures.inc({ provider, error_class: errorClass }),
    settled(provider, status, receivedAt, now) {
      settled.inc({ provider, status });
      processingLatency.observe({ provider, status }, Math.max(0, (now.getTime() - receivedAt.getTime()) / 1000));
    },
    rejectedMoneyEvent: (provider, kind) => rejectedMoney.inc({ provider, kind }),
  };
}

export function declareIngestFirstMetrics(registers: Registry[]): IngestFirstMetrics {
  const batchEvents = new Histogram({
    name: 'inbox_worker_batch_events',
    help: 'Events a worker applied in one transaction, by mode: full, or yielding to the receiver of its process (ingest first).',
    labelNames: ['mode'],
    buckets: BATCH_EVENTS_BUCKETS,
    registers,
  });
  const yieldPauses = new Counter({
    name: 'inbox_worker_yield_pauses_total',
    help: 'Pauses workers took for the receiver of their process (ingest first).',
    registers,
  });
  const yieldSeconds = new Counter({
    name: 'inbox_worker_yield_seconds_total',
    help: 'Time workers spent paused for the receiver of their process.',
    registers,
  });
  let readPressure: () => IngestPressureLevel = () => 'quiet';
  new Gauge({
    name: 'inbox_ingest_pressure',
    help: 'The receiver of this process: 0 quiet, 1 acks slow (its workers keep pace with arrivals), 2 saturated (its workers yield).',
    registers,
    collect() {
      this.set(PRESSURE_VALUE[readPressure()]);
    },
  });
  return {
    applied: (mode, events) => batchEvents.observe({ mode }, events),
    paused(seconds) {
      yieldPauses.inc();
      yieldSeconds.inc(seconds);
    },
    readPressureFrom(read) {
      readPressure = read;
    },
  };
}
