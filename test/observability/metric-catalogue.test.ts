import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Metric } from 'prom-client';
import { createMetrics } from '../../src/observability/metrics.ts';

/**
 * Every metric the service declares, as a scraper and an alert see it: name, type, help, label
 * names, histogram buckets, and the series that exist before anything happened (the counters a
 * configured provider or destination starts at 0). Recorded in metric-catalogue.json; a change
 * to any of it is a change to the operators' interface, made on purpose by editing that file
 * (docs/observability.md lists the metrics; a rename keeps the old name as an alias for a release).
 */
async function metricCatalogue(): Promise<unknown[]> {
  const metrics = createMetrics({ defaultMetrics: false, providers: ['stripe'], destinations: ['crm'] });
  const catalogue = [];
  for (const metric of metrics.registry.getMetricsAsArray()) {
    const { name, help, type, labelNames, buckets } = metric as unknown as {
      name: string;
      help: string;
      type: string;
      labelNames: string[];
      buckets?: number[];
    };
    const { values } = await (metric as unknown as Metric).get();
    // Histograms start with no series; the others list the series present from the start.
    const initialSeries = type === 'histogram' ? [] : values.map((v) => v.labels).filter((labels) => Object.keys(labels).length > 0);
    catalogue.push({ name, type, help, labelNames: labelNames ?? [], ...(buckets ? { buckets } : {}), initialSeries });
  }
  return catalogue.sort((a, b) => a.name.localeCompare(b.name));
}

test('the metrics declared, their types, help, labels, buckets and first series are the recorded catalogue', async () => {
  const recorded = JSON.parse(readFileSync(new URL('./metric-catalogue.json', import.meta.url), 'utf8')) as unknown[];
  assert.deepEqual(await metricCatalogue(), recorded);
});

test('docs/observability.md names every metric declared', async () => {
  const page = readFileSync(new URL('../../docs/observability.md', import.meta.url), 'utf8');
  const names = (await metricCatalogue()).map((metric) => (metric as { name: string }).name);
  assert.deepEqual(
    names.filter((name) => !page.includes(`\`${name}\``)),
    [],
  );
});
