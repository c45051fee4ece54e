import { Hono } from 'hono';
import type { AppEnv } from './env.ts';

export interface HealthDeps {
  /** Resolves when the database answers; rejects otherwise. */
  pingDatabase(): Promise<void>;
  readinessTimeoutMs: number;
  /** False once shutdown began: load balancers should stop routing here. */
  isAcceptingTraffic(): boolean;
}

/** /healthz: the process is alive. /readyz: it can store events right now. */
export function createHealthRoutes(deps: HealthDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  routes.get('/healthz', (c) => c.json({ status: 'ok' }));
  routes.get('/readyz', async (c) => {
    if (!deps.isAcceptingTraffic()) return c.json({ status: 'shutting_down' }, 503);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        deps.pingDatabase(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), deps.readinessTimeoutMs);
        }),
      ]);
      return c.json({ status: 'ready' });
    } catch {
      return c.json({ status: 'database_unavailable' }, 503);
    } finally {
      clearTimeout(timer);
    }
  });
  return routes;
}
