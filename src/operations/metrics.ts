import { Counter, Gauge, type Registry } from 'prom-client';
import type { DeliveryGauges } from '../delivery/metrics.ts';
import type { InboxGauges } from '../inbox/metrics.ts';
import type { QueueGauges } from '../queue/metrics.ts';
import type { ReconciliationGauges } from '../reconciliation/metrics.ts';

/**
 * The operators' jobs' metrics (sweeper, retention) and the gauge refresher's own. The gauges
 * it sets are declared by the subsystems they describe; DatabaseGauges is all of them. Composed
 * into one registry by src/observability/metrics.ts.
 */

export interface OperationsMetrics {
  sweeperRun(outcome: 'ok' | 'error', requeued: number): void;
  /** `deleted`: rows removed (archived first when an archive folder is configured), per provider. */
  retentionRun(outcome: 'ok' | 'error', counts: readonly { provider: string; deleted: number }[]): void;
}

/** When the database-derived gauges were last refreshed, and the refreshes that failed. */
export interface GaugeRefreshMetrics {
  refreshTimestamp: Gauge;
  refreshFailures: Counter;
}

/** The gauges the periodic database refresh sets (src/operations/gauge-refresher.ts). */
export type DatabaseGauges = InboxGauges & QueueGauges & GaugeRefreshMetrics & DeliveryGauges & ReconciliationGauges;

export function declareOperationsMetrics(registers: Registry[]): OperationsMetrics {
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
  return {
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
  };
}

export function declareGaugeRefreshMetrics(registers: Registry[]): GaugeRefreshMetrics {
  return {
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
  };
}
