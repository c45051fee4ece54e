import type { Database } from '../../src/db/client.ts';
import { createLogger } from '../../src/logger.ts';
import { type Metrics, createMetrics } from '../../src/observability/metrics.ts';
import { GaugeRefresher } from '../../src/operations/gauge-refresher.ts';

/** The service's gauges after one refresh from the database, for configured `providers` (no queues read). */
export async function refreshedGauges(db: Database, providers: string[]): Promise<Metrics> {
  const metrics = createMetrics({ defaultMetrics: false });
  const refresher = new GaugeRefresher({
    db,
    boss: { getQueue: async () => null },
    queues: [],
    gauges: metrics.gauges,
    providers: () => providers,
    intervalMs: 60_000,
    logger: createLogger('silent'),
  });
  await refresher.refresh();
  return metrics;
}
