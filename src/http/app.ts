import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import { webhookRequestMetrics } from './webhook-request-metrics.ts';
import { type Metrics, createMetrics } from '../observability/metrics.ts';
import type { AllowedHosts } from '../web/allowed-hosts.ts';
import type { AppEnv } from './env.ts';
import { errorResponse } from './errors.ts';
import { type HealthDeps, createHealthRoutes } from './health-routes.ts';
import { createHostGuard } from './host-guard.ts';
import { createMetricsRoute } from './metrics-route.ts';
import { type WebhookRouteDeps, createWebhookRoute } from './webhook-route.ts';

/**
 * Routes for operators and the application (the dashboard, /api/v1), mounted by the composition root, which alone knows them.
 * Every operator route (OPERATOR_PATHS) answers only to `allowedHosts` (host-guard.ts).
 */
export interface OperatorRoutes {
  allowedHosts: AllowedHosts;
  /** Called once the guard is in place: hono runs handlers in the order they were added. */
  mountRoutes(app: Hono<AppEnv>): void;
}

/**
 * `metrics`: the service's registry; an app built without one (a test, a harness) gets its own.
 * `operator`: absent when neither the dashboard (INBOX_DASHBOARD) nor the API (INBOX_API_TOKEN) is on;
 * each that is off is a plain 404.
 * /webhooks, /metrics and health never answer only to some names: gateways and scrapers use any.
 * `receiveWebhooks: false` (worker role): the same app still serves /metrics and health, so worker
 * instances can be scraped and probed, but /webhooks/* is a 404.
 */
export type AppDeps = WebhookRouteDeps & HealthDeps & { logger: Logger; metrics?: Metrics; operator?: OperatorRoutes; receiveWebhooks?: boolean };

/** Host-guarded routes. The operator API belongs under /api/v1, mounted after the guard (hono runs handlers in order). */
export const OPERATOR_PATHS = ['/dashboard/*', '/api/v1/*'] as const;

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const metrics = deps.metrics ?? createMetrics({ defaultMetrics: false });
  app.use(async (c, next) => {
    // A gateway's own id for the request is the most useful request id when it sends one.
    const requestId = c.req.header('x-request-id')?.slice(0, 100) ?? randomUUID();
    c.set('logger', deps.logger.child({ requestId }));
    await next();
  });
  const receiveWebhooks = deps.receiveWebhooks ?? true;
  const recordWebhookRequest = webhookRequestMetrics({ metrics: metrics.webhookRequests, isKnownProvider: (name) => deps.driverFor(name) !== undefined });
  if (receiveWebhooks) app.use('/webhooks/:provider', (c, next) => (c.req.method === 'POST' ? recordWebhookRequest(c, next) : next()));
  app.onError((error, c) => errorResponse(error, c, c.get('logger') ?? deps.logger));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'No such route.' } }, 404));
  app.route('/', createHealthRoutes(deps));
  app.route('/', createMetricsRoute({ registry: metrics.registry }));
  if (receiveWebhooks) app.route('/', createWebhookRoute(deps));
  if (deps.operator) {
    const hostGuard = createHostGuard({ allowedHosts: deps.operator.allowedHosts });
    for (const path of OPERATOR_PATHS) app.use(path, hostGuard);
    deps.operator.mountRoutes(app);
  }
  return app;
}
