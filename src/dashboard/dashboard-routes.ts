import { Hono } from 'hono';
import { getCookie } from 'hono/cookie';
import { drizzleExecutor } from '../db/client.ts';
import { countLanesByDestination } from '../delivery/lane-counts.ts';
import { describeDestinations } from '../delivery/lane-operations.ts';
import { countBacklogByProvider, countReceivedByBucket } from '../inbox/sql/counts.ts';
import { findEventById, findEventsOfResource } from '../inbox/sql/find-events.ts';
import { findFailedEvents } from '../inbox/sql/failed-events.ts';
import { settledLagByProvider } from '../inbox/sql/lag.ts';
import { SESSION_COOKIE } from './admin-access.ts';
import { createActionRoutes } from './action-routes.ts';
import type { DashboardDeps, DashboardEnv } from './dashboard-env.ts';
import { countConflictsByProvider, findConflictsOfEvent } from '../inbox/sql/conflicts.ts';
import { activitySince, conflictsSince, HOUR_BUCKET_SECONDS, summarizeProviders } from './overview-model.ts';
import { createEventRoutes } from './event-routes.ts';
import { selectPaymentOfEvent } from './sql/payment.ts';
import { selectPaymentHistory } from './sql/payment-history.ts';
import { isSessionSignedOut } from './sql/signed-out-sessions.ts';
import { renderEventPage, renderMessagePage } from './views/event-page.ts';
import { selectFindingsOfPayment } from '../reconciliation/sql/findings.ts';
import { createFindingsRoutes } from './findings-routes.ts';
import { formatCount } from './views/format.ts';
import type { Notice } from './views/layout.ts';
import { selectDeauthorizedAccounts } from '../refetch/account-access-sql.ts';
import { renderOverviewPage } from './views/overview-page.ts';
import { dashboardCss } from './views/styles.ts';

export type { DashboardDeps } from './dashboard-env.ts';

// No script runs on these pages, styles come from our own stylesheet, forms post only to us, and
// no other site may frame them (clickjacking a replay button).
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The count our own redirect wrote: digits only. Anyone can craft the link, so anything else
 * (-5, 1e3, 0x10) is dropped rather than shown to an operator as what a replay did.
 */
function countFrom(text: string | undefined): number | undefined {
  const count = text !== undefined && /^\d+$/.test(text) ? Number(text) : Number.NaN;
  return Number.isSafeInteger(count) ? count : undefined;
}

/** Only fixed texts: a notice is chosen by a code in the redirect, never echoed from the URL. */
function noticeFrom(query: (name: string) => string | undefined): Notice | undefined {
  switch (query('notice')) {
    case 'replayed': {
      const count = countFrom(query('count'));
      return { text: count === undefined ? 'Events put back to pending and queued.' : `${formatCount(count)} event(s) put back to pending and queued.` };
    }
    case 'not-replayable':
      return { text: 'Nothing was replayed: only failed or ignored events can be replayed.', bad: true };
    case 'signed-in':
      return { text: 'Signed in: replay actions are enabled.' };
    case 'signed-out':
      return { text: 'Signed out.' };
    default:
      return undefined;
  }
}

/** Configured destinations and any other with lanes parked or a state: each with its state and lag. */
async function destinationsWithState(deps: DashboardDeps) {
  const names = new Set([...deps.destinations(), ...(await countLanesByDestination(deps.db)).map((d) => d.destination)]);
  return describeDestinations(deps.db, [...names].sort());
}

/**
 * GET /dashboard (overview), GET /dashboard/events/:id (one event), the event list and the payment
 * page (event-routes.ts), and the POST actions (action-routes.ts). Server-rendered HTML with inline SVG charts: nothing to build, no CDN.
 */
export function createDashboardRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  routes.use('/dashboard/*', async (c, next) => {
    const authentic = deps.access.sessionOf(getCookie(c, SESSION_COOKIE), deps.clock());
    const session = authentic && !(await isSessionSignedOut(deps.db, authentic.nonce)) ? authentic : undefined;
    c.set('session', session);
    c.set(
      'viewer',
      !deps.access.canSignIn ? { kind: 'no-token' } : session ? { kind: 'signed-in', csrfToken: deps.access.csrfTokenFor(session) } : { kind: 'signed-out' },
    );
    await next();
    c.header('content-security-policy', CONTENT_SECURITY_POLICY);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'same-origin');
    if (!c.res.headers.has('cache-control')) c.header('cache-control', 'no-store');
  });

  routes.get('/dashboard/assets/dashboard.css', (c) =>
    c.body(dashboardCss, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=300' }),
  );

  routes.get('/dashboard', async (c) => {
    const now = deps.clock();
    const configured = [...deps.providers()];
    const asked = c.req.query('provider');
    const db = drizzleExecutor(deps.db);
    const [activity, lag, backlog, conflicts, destinations, deauthorizedAccounts] = await Promise.all([
      countReceivedByBucket(db, activitySince(now), HOUR_BUCKET_SECONDS),
      settledLagByProvider(db, now),
      countBacklogByProvider(db),
      countConflictsByProvider(db, { since: conflictsSince(now) }),
      destinationsWithState(deps),
      selectDeauthorizedAccounts(deps.db),
    ]);
    const providers = summarizeProviders({ now, providers: configured, activity, lag, backlog, conflicts });
    const failedProvider = asked !== undefined && providers.some((p) => p.provider === asked) ? asked : undefined;
    const failed = await findFailedEvents(db, { provider: failedProvider, limit: 100 });
    return c.html(
      renderOverviewPage({
        now,
        providers,
        failed,
        failedProvider,
        destinations,
        deauthorizedAccounts,
        access: c.get('viewer'),
        notice: noticeFrom((n) => c.req.query(n)),
      }),
    );
  });

  routes.get('/dashboard/events/:id{[0-9]{1,18}}', async (c) => {
    const db = drizzleExecutor(deps.db);
    const event = await findEventById(db, Number(c.req.param('id')));
    if (!event) return c.html(renderMessagePage({ title: 'No such event', message: 'It may have been purged by retention.', access: c.get('viewer') }), 404);
    const [payment, resourceEvents, conflicts] = await Promise.all([
      selectPaymentOfEvent(db, event),
      event.resourceId ? findEventsOfResource(db, event.provider, event.resourceId, 100) : [],
      findConflictsOfEvent(db, event.id),
    ]);
    const [transitions, findings] = payment ? await Promise.all([selectPaymentHistory(db, payment.id), selectFindingsOfPayment(db, payment.id)]) : [[], []];
    return c.html(
      renderEventPage({ event, payment, transitions, findings, resourceEvents, conflicts, access: c.get('viewer'), notice: noticeFrom((n) => c.req.query(n)) }),
    );
  });

  routes.route('/', createEventRoutes(deps));
  routes.route('/', createActionRoutes(deps));
  routes.route('/', createFindingsRoutes(deps));
  return routes;
}
