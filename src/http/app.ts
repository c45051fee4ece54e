import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { type ApiDeps, createApiRoutes } from '../api/api-routes.ts';
import { type DashboardDeps, createDashboardRoutes } from '../dashboard/dashboard-routes.ts';
import { deliveryMetrics } from '../observability/delivery-metrics.ts';
import { type Metrics, createMetrics } from '../observability/metrics.ts';
import type { AppEnv } from './env.ts';
import { errorResponse } from './errors.ts';
import { type HealthDeps, createHealthRoutes } from './health-routes.ts';
import { createHostGuard } from './host-guard.ts';
import { createMetricsRoute } from './metrics-route.ts';
import { type WebhookRouteDeps, createWebhookRoute } from './webhook-route.ts';

/**
 * `metrics`: the service's registry; an app built without one (a test, a harness) gets its own.
 * `dashboard`: absent when INBOX_DASHBOARD resolves to off; then /dashboard is a plain 404. Present,
 * every operator route (OPERATOR_PATHS) answers only to the dashboard's own host names
 * (host-guard.ts). /webhooks, /metrics and health never do: gateways and scrapers use any name.
 * `receiveWebhooks: false` (worker role): the same app still serves /metrics and health, so worker
 * instances can be scraped and probed, but /webhooks/* is a 404.
 */
export type AppDeps = WebhookRouteDeps &
  HealthDeps & { logger: Logger; metrics?: Metrics; dashboard?: DashboardDeps; receiveWebhooks?: boolean; api?: ApiDeps };

/** Host-guarded routes. The operator API belongs under /api/v1, mounted after the guard (hono runs handlers in order). */
export const OPERATOR_PATHS = ['/dashboard/*', '/api/v1/*'] as const;

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const metrics = deps.metrics ?? createMetrics({ defaultMetrics: false });
  app.use(async (c, next) => {
    // A gateway's own delivery id is the most useful request id when it sends one.
    const requestId = c.req.header('x-request-id')?.slice(0, 100) ?? randomUUID();
    c.set('logger', deps.logger.child({ requestId }));
    await next();
  });
  const receiveWebhooks = deps.receiveWebhooks ?? true;
  const recordDelivery = deliveryMetrics({ metrics: metrics.delivery, isKnownProvider: (name) => deps.providers.has(name) });
  if (receiveWebhooks) app.use('/webhooks/:provider', (c, next) => (c.req.method === 'POST' ? recordDelivery(c, next) : next()));
  app.onError((error, c) => errorResponse(error, c, c.get('logger') ?? deps.logger));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'No such route.' } }, 404));
  app.route('/', createHealthRoutes(deps));
  app.route('/', createMetricsRoute({ registry: metrics.registry }));
  if (receiveWebhooks) app.route('/', createWebhookRoute(deps));
  if (deps.dashboard) {
    const hostGuard = createHostGuard({ allowedHosts: deps.dashboard.allowedHosts });
    for (const path of OPERATOR_PATHS) app.use(path, hostGuard);
    app.route('/', createDashboardRoutes(deps.dashboard));
  }
  // `api`: absent without INBOX_API_TOKEN, then /api/v1/* is a plain 404. Host-guarded on its own (api-routes.ts).
  if (deps.api) app.route('/', createApiRoutes(deps.api));
  return app;
}
