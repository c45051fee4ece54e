import { getConnInfo } from '@hono/node-server/conninfo';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, setCookie } from 'hono/cookie';
import { type ReplayFilter, replayEvents } from '../operations/replay-events.ts';
import { SESSION_COOKIE, SESSION_LIFETIME_SECONDS, isSameOriginRequest, sessionExpiresAt } from './admin-access.ts';
import { type DashboardDeps, type DashboardEnv, formFields } from './dashboard-env.ts';
import { drizzleExecutor } from '../db/client.ts';
import { findEventById } from '../inbox/sql/find-events.ts';
import { renderMessagePage } from './views/event-page.ts';
import { renderReplayPreviewPage } from './views/replay-preview-page.ts';
import { recordSignedOutSession } from './sql/signed-out-sessions.ts';
import { SIGN_IN_MAX_CLIENTS, SIGN_IN_MAX_FAILURES, SIGN_IN_WINDOW_SECONDS, clientKeyOf, createSignInThrottle } from './sign-in-throttle.ts';

type Guard = MiddlewareHandler<DashboardEnv>;

const FORM_MAX_BYTES = 16 * 1024;

/**
 * The socket's peer, never X-Forwarded-For: any client can write that header. Behind a reverse
 * proxy every client is the proxy's address and shares one budget (docs/dashboard.md, "Sign-in is throttled per client").
 */
function remoteAddressOf(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined; // app.request() in a test: there is no socket
  }
}

/**
 * The dashboard's state-changing POSTs. Each passes three independent checks before it acts:
 * the browser says the request comes from this origin, a valid admin session cookie
 * (SameSite=Strict, so another site cannot make the browser send it), and the session's CSRF token
 * in the form. Replays call `replayEvents`, the function behind `inboxctl replay`. Wrong sign-in
 * tokens are throttled per client (sign-in-throttle.ts).
 */
export function createActionRoutes(deps: DashboardDeps): Hono<DashboardEnv> {
  const routes = new Hono<DashboardEnv>();
  const throttle = createSignInThrottle({
    maxFailures: SIGN_IN_MAX_FAILURES,
    windowSeconds: SIGN_IN_WINDOW_SECONDS,
    maxClients: SIGN_IN_MAX_CLIENTS,
    clock: deps.clock,
  });
  // Secure wherever the browser's connection is TLS: INBOX_PUBLIC_URL says so behind a proxy that
  // terminates it (the request here is plain http); a proxy may also say so per request.
  const sessionCookieOptions = (c: Context) => ({
    httpOnly: true,
    sameSite: 'Strict' as const,
    secure: deps.publishedOverHttps || c.req.header('x-forwarded-proto') === 'https' || new URL(c.req.url).protocol === 'https:',
    path: '/dashboard',
  });
  const refuse = (c: Parameters<Guard>[0], title: string, message: string) => {
    c.get('logger').warn({ path: c.req.path, reason: title }, 'dashboard action refused');
    return c.html(renderMessagePage({ title, message, access: c.get('viewer') }), 403);
  };

  const sameOrigin: Guard = async (c, next) => {
    if (!deps.access.canSignIn) return refuse(c, 'Read-only dashboard', 'INBOX_ADMIN_TOKEN is not set, so nothing can be changed from here.');
    if (!isSameOriginRequest({ header: (name) => c.req.header(name) }, deps.allowedHosts))
      return refuse(c, 'Cross-origin request refused', 'This action must be submitted from the dashboard itself.');
    await next();
  };
  const signedIn: Guard = async (c, next) => {
    const session = c.get('session');
    if (!session) return refuse(c, 'Sign in first', 'Replays need an admin session: sign in with the admin token.');
    if (!deps.access.checkCsrfToken(session, (await formFields(c.req)).csrf))
      return refuse(c, 'Form expired', 'The form is stale or was not issued by this dashboard. Reload the page and try again.');
    await next();
  };
  // A form is a token, a CSRF token and a few filter fields. bodyLimit's default answer is an
  // exception the app's error handler knows nothing of (it became a 500): answer it here.
  const formLimit = bodyLimit({
    maxSize: FORM_MAX_BYTES,
    onError: (c) =>
      c.html(renderMessagePage({ title: 'Form too large', message: `A dashboard form is at most ${FORM_MAX_BYTES / 1024} KB.`, access: c.get('viewer') }), 413),
  });
  // A body that claims to be a form and is not one (multipart/form-data without its boundary)
  // makes the parser throw, which was a 500: refuse it once here. The parsed form is cached on the
  // request, so the handlers' own formFields calls read it again without parsing.
  const readableForm: Guard = async (c, next) => {
    try {
      await formFields(c.req);
    } catch {
      return c.html(
        renderMessagePage({
          title: 'Unreadable form',
          message: 'The request body is not a form this dashboard can read. Submit the form from the dashboard page.',
          access: c.get('viewer'),
        }),
        400,
      );
    }
    await next();
  };
  routes.post('/dashboard/*', formLimit, sameOrigin, readableForm);

  routes.post('/dashboard/session', async (c) => {
    const { token } = await formFields(c.req);
    // From here to the answer nothing awaits: concurrent attempts cannot all pass the check first.
    const client = clientKeyOf(remoteAddressOf(c));
    const retryAfter = throttle.retryAfterSeconds(client);
    if (retryAfter !== undefined) {
      c.header('Retry-After', String(retryAfter));
      return c.html(
        renderMessagePage({
          title: 'Too many attempts',
          message: `Too many wrong tokens from this address. Try again in ${retryAfter} s.`,
          access: c.get('viewer'),
        }),
        429,
      );
    }
    if (token === undefined || !deps.access.checkToken(token)) {
      if (throttle.recordFailure(client))
        c.get('logger').warn({ client, windowSeconds: SIGN_IN_WINDOW_SECONDS }, `dashboard sign-in throttled after ${SIGN_IN_MAX_FAILURES} wrong tokens`);
      return refuse(c, 'Wrong token', 'That is not the admin token.');
    }
    throttle.recordSuccess(client);
    setCookie(c, SESSION_COOKIE, deps.access.issueSession(deps.clock()), { ...sessionCookieOptions(c), maxAge: SESSION_LIFETIME_SECONDS });
    c.get('logger').info('dashboard admin signed in');
    return c.redirect('/dashboard?notice=signed-in', 303);
  });

  // The browser forgets its cookie; the record makes every instance refuse any copy of it too.
  routes.post('/dashboard/session/end', signedIn, async (c) => {
    const session = c.get('session')!;
    await recordSignedOutSession(deps.db, session.nonce, sessionExpiresAt(session), deps.clock());
    deleteCookie(c, SESSION_COOKIE, sessionCookieOptions(c));
    return c.redirect('/dashboard?notice=signed-out', 303);
  });

  routes.post('/dashboard/events/:id{[0-9]{1,18}}/replay', signedIn, async (c) => {
    const event = await findEventById(drizzleExecutor(deps.db), Number(c.req.param('id')));
    if (!event) return c.html(renderMessagePage({ title: 'No such event', message: 'It may have been purged by retention.', access: c.get('viewer') }), 404);
    if (event.status !== 'failed' && event.status !== 'ignored') return c.redirect(`/dashboard/events/${event.id}?notice=not-replayable`, 303);
    const result = await replayEvents({ db: deps.db, boss: deps.boss }, { provider: event.provider, statuses: [event.status], eventIds: [event.eventId] });
    c.get('logger').info({ action: 'replay', inboxId: event.id, provider: event.provider, replayed: result.replayed }, 'dashboard replay');
    return c.redirect(`/dashboard/events/${event.id}?notice=replayed&count=${result.replayed}`, 303);
  });

  routes.post('/dashboard/replay', signedIn, async (c) => {
    const fields = await formFields(c.req);
    const parsed = replayFilterFrom(fields, new Set(deps.providers()));
    if (typeof parsed === 'string') return c.html(renderMessagePage({ title: 'Cannot replay', message: parsed, access: c.get('viewer') }), 400);
    const confirmed = fields.confirm === 'yes';
    const result = await replayEvents({ db: deps.db, boss: deps.boss }, parsed.filter, { dryRun: !confirmed });
    if (!confirmed) {
      const predictable = result.matched > 0 && result.matched <= PREDICTION_LIMIT;
      const prediction = predictable ? await deps.predictReplay(parsed.filter, result.statuses) : undefined;
      return c.html(
        renderReplayPreviewPage({ preview: result, prediction, predictionLimit: PREDICTION_LIMIT, fields: parsed.fields, access: c.get('viewer') }),
      );
    }
    c.get('logger').info({ action: 'replay', ...parsed.fields, matched: result.matched, replayed: result.replayed }, 'dashboard replay');
    return c.redirect(`/dashboard?notice=replayed&count=${result.replayed}`, 303);
  });

  return routes;
}

/**
 * The preview runs the handlers on every matched event inside one rolled-back transaction while
 * the operator waits for the page; beyond this many it shows counts and points to
 * `inboxctl replay --dry-run`, which has no page to time out.
 */
const PREDICTION_LIMIT = 1_000;

/** `datetime-local` values carry no zone; the form labels them UTC. */
function parseUtc(value: string | undefined): Date | undefined | 'invalid' {
  if (!value) return undefined;
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? 'invalid' : date;
}

export function replayFilterFrom(fields: Record<string, string | undefined>, providers: ReadonlySet<string>) {
  const provider = fields.provider ?? '';
  const status = fields.status ?? 'failed';
  if (!providers.has(provider)) return 'Choose a configured provider.';
  if (status !== 'failed' && status !== 'ignored') return 'Only failed or ignored events can be replayed.';
  const since = parseUtc(fields.since);
  const until = parseUtc(fields.until);
  if (since === 'invalid' || until === 'invalid') return 'The dates must look like 2026-01-31T14:05 (UTC).';
  const filter: ReplayFilter = { provider, statuses: [status], since, until };
  return { filter, fields: { provider, status, since: fields.since ?? '', until: fields.until ?? '' } };
}
