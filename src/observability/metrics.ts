import { Registry, collectDefaultMetrics } from 'prom-client';
import { type DeliveryGauges, type ForwardingMetrics, declareDeliveryGauges, declareForwardingMetrics } from '../delivery/metrics.ts';
import { type WebhookRequestMetrics, declareInboxGauges, declareWebhookRequestMetrics } from '../inbox/metrics.ts';
import { type DatabaseGauges, type OperationsMetrics, declareGaugeRefreshMetrics, declareOperationsMetrics } from '../operations/metrics.ts';
import { type IngestFirstMetrics, type ProcessingMetrics, declareIngestFirstMetrics, declareProcessingMetrics } from '../processing/metrics.ts';
import { declareQueueGauges } from '../queue/metrics.ts';
import { declareReconciliationGauges } from '../reconciliation/metrics.ts';
import { type RefetchMetrics, declareRefetchMetrics } from '../refetch/metrics.ts';

/**
 * Every metric the inbox exports, in one registry per service instance (never prom-client's
 * global one: tests run several services in one process). Each subsystem declares its own
 * metrics in its folder (`src/<subsystem>/metrics.ts`: names, help, buckets, and the narrow
 * facade its code calls); this module only composes them. Components receive their facade
 * (`WebhookRequestMetrics`, `ProcessingMetrics`, …) through their deps.
 */
export interface Metrics {
  registry: Registry;
  forwarding: ForwardingMetrics;
  webhookRequests: WebhookRequestMetrics;
  processing: ProcessingMetrics;
  ingestFirst: IngestFirstMetrics;
  refetch: RefetchMetrics;
  operations: OperationsMetrics;
  /** The gauges the periodic database refresh sets (src/operations/gauge-refresher.ts). */
  gauges: DatabaseGauges;
}

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
  const deliveryGauges: DeliveryGauges = declareDeliveryGauges(registers);
  return {
    registry,
    webhookRequests: declareWebhookRequestMetrics(registers, providers),
    processing: declareProcessingMetrics(registers, providers),
    ingestFirst: declareIngestFirstMetrics(registers),
    refetch: declareRefetchMetrics(registers),
    operations: declareOperationsMetrics(registers),
    forwarding: declareForwardingMetrics(registers, options.destinations ?? []),
    gauges: {
      ...declareInboxGauges(registers),
      ...declareQueueGauges(registers),
      ...declareGaugeRefreshMetrics(registers),
      ...deliveryGauges,
      ...declareReconciliationGauges(registers),
    },
  };
}
