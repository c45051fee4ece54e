import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The push side's metrics: payment events pushed to destinations, and the lanes' gauges the
 * periodic database refresh sets (src/operations/gauge-refresher.ts). Composed into one registry
 * by src/observability/metrics.ts.
 */

/** Payment events pushed to destinations. */
export interface ForwardingMetrics {
  /** A 2xx; `latencySeconds` runs from the payment change (payment_events.created_at) to it. */
  delivered(destination: string, latencySeconds: number): void;
  /** `reason`: the HTTP status, `no_answer` (timeout, refused, hung up) or `gone` (410). */
  failedAttempt(destination: string, reason: string): void;
}

export interface DeliveryGauges {
  parkedLanes: Gauge<'destination'>;
  destinationDisabled: Gauge<'destination'>;
  unconfiguredDestinationParkedLanes: Gauge<'destination'>;
}

// Payment change → 2xx: tens of milliseconds when flowing, the retry schedule's minutes and hours when not.
const FORWARDING_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300, 3600, 86_400];

/** `destinations`: the configured ones, whose delivery counters start at 0 (so `increase()` sees the first). */
export function declareForwardingMetrics(registers: Registry[], destinations: Iterable<string>): ForwardingMetrics {
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
  for (const destination of destinations) forwarded.inc({ destination }, 0);
  return {
    delivered(destination, latencySeconds) {
      forwarded.inc({ destination });
      forwardLatency.observe({ destination }, Math.max(0, latencySeconds));
    },
    failedAttempt: (destination, reason) => forwardFailures.inc({ destination, reason }),
  };
}

export function declareDeliveryGauges(registers: Registry[]): DeliveryGauges {
  return {
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
    unconfiguredDestinationParkedLanes: new Gauge({
      name: 'inbox_unconfigured_destination_parked_lanes',
      help: 'Parked lanes of a destination this instance is not configured with, which the database still holds: retire it (inboxctl lanes retire) or configure it again (from the database).',
      labelNames: ['destination'],
      registers,
    }),
  };
}
