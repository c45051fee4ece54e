import { type Context, Hono } from 'hono';
import type { Database } from '../db/client.ts';
import type { PaymentRow } from '../domain/payments/schema.ts';
import { toPaymentEventBody, toSplitShareBody } from '../delivery/payment-event-body.ts';
import type { RequestEnv } from '../web/request-env.ts';
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, type FeedPage, type PaymentView } from './api-schemas.ts';
import { createBearerAuth } from './bearer-auth.ts';
import { selectClusterIdentifier } from './sql/cluster-identifier.ts';
import { FEED_START, decodeFeedCursor, encodeFeedCursor } from './feed-cursor.ts';
import { openApiDocument } from './openapi.ts';
import { selectPaymentEventsAfter } from './sql/payment-events-feed.ts';
import { type RecordedTransition, selectEventsOfPayment, selectPaymentByCharge, selectTransitionsOfPayment } from './sql/payment.ts';
import { selectPayoutView, selectSettlementView } from './sql/payout.ts';

export interface ApiDeps {
  db: Database;
  /** INBOX_API_TOKEN; the API is not mounted at all without one. */
  token: string;
}

function apiError(c: Context<RequestEnv>, status: 400 | 404 | 405 | 409, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}

// A cursor of another cluster's transaction ids (the inbox was restored or moved): nothing it points
// at exists here. Reading again from the start is safe, as every event keeps its id.
const FOREIGN_CURSOR_MESSAGE =
  'This cursor was issued by another PostgreSQL cluster (the inbox database has been restored or moved since), so it points at nothing here. ' +
  'Read the feed again from the start (omit `after`, or send it empty) and skip the events whose `id` you have already applied; the per-payment `sequence` check does that too.';

/**
 * Another method on a route that exists: 405 with Allow (RFC 9110), not the 404 of a path that
 * does not. Registered after the route's GET, so only what GET did not answer reaches it; hono
 * answers HEAD as GET.
 */
function methodNotAllowed(c: Context<RequestEnv>): Response {
  c.header('Allow', 'GET, HEAD');
  return apiError(c, 405, 'method_not_allowed', 'This route answers GET (and HEAD) only.');
}

/** `limit` as sent: digits only, 1 to FEED_MAX_LIMIT; absent means the default. */
function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return FEED_DEFAULT_LIMIT;
  if (!/^\d{1,4}$/.test(value)) return undefined;
  const limit = Number(value);
  return limit >= 1 && limit <= FEED_MAX_LIMIT ? limit : undefined;
}

/**
 * PostgreSQL text cannot hold a NUL character, so a path segment with one (`%00`) names no payment;
 * sent as a query parameter it fails the statement (a 500) instead of finding nothing.
 */
function isStorableText(value: string): boolean {
  return !value.includes('\0');
}

function paymentView(
  payment: PaymentRow,
  events: Parameters<typeof toPaymentEventBody>[0][],
  transitions: RecordedTransition[],
  settlement: PaymentView['settlement'],
): PaymentView {
  return {
    payment: {
      provider: payment.provider,
      charge_id: payment.gatewayChargeId,
      account: payment.account,
      status: payment.status,
      amount: payment.amount,
      amount_refunded: payment.amountRefunded,
      currency: payment.currency,
      inquiry_open: payment.inquiryOpen,
      split: payment.split?.map(toSplitShareBody) ?? null,
      last_gateway_event_at: payment.lastGatewayEventAt?.toISOString() ?? null,
      event_sequence: payment.eventSequence,
      created_at: payment.createdAt.toISOString(),
      updated_at: payment.updatedAt.toISOString(),
    },
    events: events.map(toPaymentEventBody),
    transitions: transitions.map((t) => ({ from_status: t.fromStatus, to_status: t.toStatus, inbox_id: t.inboxId, recorded_at: t.recordedAt.toISOString() })),
    settlement,
  };
}

/**
 * /api/v1 for the application: the payment-events feed, one payment's state, history and settlement,
 * one payout's entries, and the OpenAPI description. Mounted behind the app's host guard (OPERATOR_PATHS in http/app.ts), so every
 * route answers only to the service's own host names and, except the
 * description (the same document as in the repository, for client generators), only with the token.
 */
export function createApiRoutes(deps: ApiDeps): Hono<RequestEnv> {
  const routes = new Hono<RequestEnv>();
  routes.use('/api/v1/*', async (c, next) => {
    await next();
    c.header('cache-control', 'no-store');
  });
  routes.get('/api/v1/openapi.json', (c) => c.json(openApiDocument()));
  routes.all('/api/v1/openapi.json', methodNotAllowed);
  routes.use('/api/v1/*', createBearerAuth(deps.token));

  routes.get('/api/v1/payment-events', async (c) => {
    const limit = parseLimit(c.req.query('limit'));
    if (limit === undefined)
      return apiError(c, 400, 'limit_invalid', `limit must be a whole number from 1 to ${FEED_MAX_LIMIT} (default ${FEED_DEFAULT_LIMIT}).`);
    const afterText = c.req.query('after');
    // Empty means "from the start", so a consumer's first request can pass the cursor it has not stored yet.
    const after = afterText === undefined || afterText === '' ? { ...FEED_START, cluster: undefined } : decodeFeedCursor(afterText);
    if (!after) return apiError(c, 400, 'cursor_invalid', 'after must be a next_cursor this feed returned (or empty, to read from the start).');
    const account = c.req.query('account');
    if (account !== undefined && (account === '' || account.length > 150 || !isStorableText(account))) {
      return apiError(c, 400, 'account_invalid', 'account must be a gateway account id (e.g. a Stripe Connect acct_…), 1 to 150 characters.');
    }
    const cluster = await selectClusterIdentifier(deps.db);
    if (after.cluster !== undefined && after.cluster !== cluster) {
      return apiError(c, 409, 'cursor_from_other_cluster', FOREIGN_CURSOR_MESSAGE);
    }
    // A cursor is a position in the one feed: read with an account, it skips the other accounts'
    // events, so a consumer keeps one cursor per filter it reads with.
    const rows = await selectPaymentEventsAfter(deps.db, after, limit, account);
    const last = rows.at(-1);
    const page: FeedPage = {
      events: rows.map(toPaymentEventBody),
      next_cursor: encodeFeedCursor(last ? { txid: last.txid, position: last.position } : after, cluster),
    };
    return c.json(page);
  });
  routes.all('/api/v1/payment-events', methodNotAllowed);

  routes.get('/api/v1/payments/:provider/:chargeId', async (c) => {
    const provider = c.req.param('provider');
    const chargeId = c.req.param('chargeId');
    const payment = isStorableText(provider) && isStorableText(chargeId) ? await selectPaymentByCharge(deps.db, provider, chargeId) : undefined;
    if (!payment) return apiError(c, 404, 'payment_not_found', 'No payment with that provider and charge id is known to the inbox.');
    const [events, transitions, settlement] = await Promise.all([
      selectEventsOfPayment(deps.db, payment.id),
      selectTransitionsOfPayment(deps.db, payment.id),
      selectSettlementView(deps.db, payment.provider, payment.gatewayChargeId),
    ]);
    return c.json(paymentView(payment, events, transitions, settlement));
  });
  routes.all('/api/v1/payments/:provider/:chargeId', methodNotAllowed);

  addPayoutRoute(routes, deps);
  return routes;
}

/** One payout as reconciliation read it: its entries, their payments, totals. */
function addPayoutRoute(routes: Hono<RequestEnv>, deps: ApiDeps): void {
  routes.get('/api/v1/payouts/:provider/:payoutId', async (c) => {
    const provider = c.req.param('provider');
    const payoutId = c.req.param('payoutId');
    const view = isStorableText(provider) && isStorableText(payoutId) ? await selectPayoutView(deps.db, provider, payoutId) : undefined;
    if (!view)
      return apiError(
        c,
        404,
        'payout_not_found',
        'No payout with that provider and id has been read: `inboxctl reconcile --provider <provider> --payout <id>` reads it.',
      );
    return c.json(view);
  });
  routes.all('/api/v1/payouts/:provider/:payoutId', methodNotAllowed);
}
