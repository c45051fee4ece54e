import { Hono } from 'hono';
import type { Registry } from 'prom-client';
import type { AppEnv } from './env.ts';

export interface MetricsRouteDeps {
  registry: Registry;
}

/**
 * GET /metrics in the Prometheus text format. Reads memory only: the database-derived gauges are
 * refreshed on their own timer (operations/gauge-refresher.ts), never per scrape.
 */
export function createMetricsRoute(deps: MetricsRouteDeps): Hono<AppEnv> {
  const route = new Hono<AppEnv>();
  route.get('/metrics', async (c) => {
    const body = await deps.registry.metrics();
    return c.body(body, 200, { 'content-type': deps.registry.contentType, 'cache-control': 'no-store' });
  });
  return route;
}
