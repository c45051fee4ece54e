import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import type { Logger } from 'pino';
import type { AppEnv } from './env.ts';
import { errorResponse } from './errors.ts';
import { type HealthDeps, createHealthRoutes } from './health-routes.ts';
import { type WebhookRouteDeps, createWebhookRoute } from './webhook-route.ts';

export type AppDeps = WebhookRouteDeps & HealthDeps & { logger: Logger };

export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    // A gateway's own delivery id is the most useful request id when it sends one.
    const requestId = c.req.header('x-request-id')?.slice(0, 100) ?? randomUUID();
    c.set('logger', deps.logger.child({ requestId }));
    await next();
  });
  app.onError((error, c) => errorResponse(error, c, c.get('logger') ?? deps.logger));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'No such route.' } }, 404));
  app.route('/', createHealthRoutes(deps));
  app.route('/', createWebhookRoute(deps));
  return app;
}
