import { sql } from 'drizzle-orm';
import { Hono } from 'hono';
import { type SqlExecutor, drizzleExecutor } from '../db/client.ts';
import { countLanesByDestination } from '../delivery/lane-counts.ts';
import { listStoredProviders } from '../inbox/sql/counts.ts';
import { findEventsPage } from '../inbox/sql/event-list.ts';
import type { DashboardDeps, DashboardEnv } from './dashboard-env.ts';
import { parseEventListQuery } from './event-list-query.ts';
import { selectPaymentByKey } from './sql/payment.ts';
import { selectPaymentEvents, selectPaymentLanes } from './sql/payment-deliveries.ts';
import { selectPaymentFacts } from './sql/payment-facts.ts';
import { selectPaymentHistory } from './sql/payment-history.ts';
import { selectFindingsOfPayment } from '../reconciliation/sql/findings.ts';
import { renderMessagePage } from './views/event-page.ts';
import { renderEventListPage } from './views/event-list-page.ts';
import { renderPaymentPage } from './views/payment-page.ts';

const PAGE_SIZE = 50;
/** A search on no index (a rare type over years of events) stops here and says to narrow it. */
const SEARCH_TIMEOUT_MS = 10_000;
/** Facts listed on a payment page: a charge has a handful; a runaway sender is cut off, not paged. */
const FACTS_SHOWN = 200;

/** Configured providers first, then any other the inbox holds events of (a removed one still has rows). */
async function knownProviders(db: SqlExecutor, configured: Iterable<string>): Promise<string[]> {
  return [...new Set([...configured, ...(await listStoredProviders(db))])];
}

const isQueryCanceled = (error: unknown) =>
  (error as { code?: unknown })?.code === '57014' || (error as { cause?: { code?: unknown } })?.cause?.code === '57014';

/** GET /dashboard/events (the event list) and GET /dashboard/payments/:provider/:chargeId (one payment). */
export function createEventRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();

  routes.get('/dashboard/events', async (c) => {
    const db = drizzleExecutor(deps.db);
    const providers = await knownProviders(db, deps.providers());
    const parsed = parseEventListQuery((name) => c.req.query(name));
    const base = { fields: parsed.fields, providers, events: [], olderBeforeId: undefined, access: c.get('viewer') };
    if ('problem' in parsed) return c.html(renderEventListPage({ ...base, problem: parsed.problem }), 400);
    try {
      const found = await deps.db.transaction(async (tx) => {
        await tx.execute(sql.raw(`set local statement_timeout = ${SEARCH_TIMEOUT_MS}`));
        return findEventsPage(drizzleExecutor(tx), parsed.request.filter, { beforeId: parsed.request.beforeId, limit: PAGE_SIZE + 1, providers });
      });
      const events = found.slice(0, PAGE_SIZE);
      return c.html(renderEventListPage({ ...base, events, olderBeforeId: found.length > PAGE_SIZE ? events.at(-1)!.id : undefined }));
    } catch (error) {
      if (!isQueryCanceled(error)) throw error;
      return c.html(renderEventListPage({ ...base, tooBroad: true }), 503);
    }
  });

  routes.get('/dashboard/payments/:provider/:chargeId', async (c) => {
    const db = drizzleExecutor(deps.db);
    const payment = await selectPaymentByKey(db, c.req.param('provider'), c.req.param('chargeId'));
    if (!payment) {
      return c.html(
        renderMessagePage({
          title: 'No such payment',
          message: 'No payment has this gateway and charge id (yet): its events may still be pending, or not payment events.',
          access: c.get('viewer'),
        }),
        404,
      );
    }
    const destinations = [...new Set([...deps.destinations(), ...(await countLanesByDestination(deps.db)).map((d) => d.destination)])];
    const [facts, transitions, findings, events, lanes] = await Promise.all([
      selectPaymentFacts(db, payment, FACTS_SHOWN),
      selectPaymentHistory(db, payment.id),
      selectFindingsOfPayment(db, payment.id),
      selectPaymentEvents(db, payment.id),
      selectPaymentLanes(db, payment.id, destinations),
    ]);
    return c.html(renderPaymentPage({ payment, facts, transitions, findings, events, lanes, destinations, access: c.get('viewer') }));
  });

  return routes;
}
