import { Hono } from 'hono';
import { drizzleExecutor } from '../db/client.ts';
import { selectOpenFindings } from '../reconciliation/sql/findings.ts';
import { selectLatestRuns } from '../reconciliation/sql/runs.ts';
import type { DashboardDeps, DashboardEnv } from './dashboard-env.ts';
import { renderFindingsPage } from './views/findings-page.ts';

/** `/dashboard/findings`: the open reconciliation findings (of one provider with `?provider=`) and the latest runs. */
export function createFindingsRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  routes.get('/dashboard/findings', async (c) => {
    const db = drizzleExecutor(deps.db);
    const asked = c.req.query('provider');
    const provider = asked !== undefined && /^[a-z0-9-]{1,30}$/.test(asked) ? asked : undefined;
    const [findings, runs] = await Promise.all([selectOpenFindings(db, { provider, limit: 500 }), selectLatestRuns(db, 20)]);
    return c.html(renderFindingsPage({ findings, runs, provider, access: c.get('viewer') }));
  });
  return routes;
}
