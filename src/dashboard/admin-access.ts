import { createHmac, randomBytes } from 'node:crypto';
import type { AllowedHosts } from '../web/allowed-hosts.ts';
import { equalSecrets } from '../web/equal-secrets.ts';

/**
 * Who may change state from the dashboard. Signing in with INBOX_ADMIN_TOKEN issues a session
 * cookie that is an HMAC over (issued-at, nonce) keyed by the token itself: stateless (any
 * instance can check it), expiring, and void the moment the token is rotated. That it was signed
 * out is the one thing a token cannot say: the routes look that up (sql/signed-out-sessions.ts).
 * Each session has a CSRF token derived from the same key, which every state-changing form must
 * carry.
 */
export interface AdminSession {
  issuedAtSeconds: number;
  nonce: string;
}

export interface AdminAccess {
  /** False when INBOX_ADMIN_TOKEN is unset: the dashboard is read-only for everyone. */
  readonly canSignIn: boolean;
  checkToken(candidate: string): boolean;
  /** A new session's cookie value. */
  issueSession(now: Date): string;
  /** The session a cookie value proves, if it is authentic and unexpired. */
  sessionOf(cookieValue: string | undefined, now: Date): AdminSession | undefined;
  csrfTokenFor(session: AdminSession): string;
  checkCsrfToken(session: AdminSession, candidate: string | undefined): boolean;
}

export const SESSION_COOKIE = 'inbox_admin';
export const SESSION_LIFETIME_SECONDS = 8 * 3600;

/** When sessionOf stops accepting the session's cookie. */
export function sessionExpiresAt(session: AdminSession): Date {
  return new Date((session.issuedAtSeconds + SESSION_LIFETIME_SECONDS) * 1000);
}

export function createAdminAccess(adminToken: string | undefined): AdminAccess {
  // A derived key, so the token itself is never the direct HMAC key of anything a browser holds.
  const key = adminToken === undefined ? undefined : createHmac('sha256', adminToken).update('webhook-inbox dashboard v1').digest();
  const mac = (purpose: string, session: AdminSession) =>
    createHmac('sha256', key!).update(`${purpose}|${session.issuedAtSeconds}|${session.nonce}`).digest('base64url');

  return {
    canSignIn: key !== undefined,
    checkToken: (candidate) => adminToken !== undefined && equalSecrets(candidate, adminToken),
    issueSession(now) {
      if (!key) throw new Error('No INBOX_ADMIN_TOKEN is configured: the dashboard is read-only.');
      const session = { issuedAtSeconds: Math.floor(now.getTime() / 1000), nonce: randomBytes(16).toString('base64url') };
      return `${session.issuedAtSeconds}.${session.nonce}.${mac('session', session)}`;
    },
    sessionOf(cookieValue, now) {
      if (!key || !cookieValue) return undefined;
      const [issued, nonce, signature, ...rest] = cookieValue.split('.');
      if (rest.length > 0 || !issued || !nonce || !signature || !/^\d{1,12}$/.test(issued)) return undefined;
      const session = { issuedAtSeconds: Number(issued), nonce };
      if (!equalSecrets(signature, mac('session', session))) return undefined;
      const age = now.getTime() / 1000 - session.issuedAtSeconds;
      return age >= -60 && age < SESSION_LIFETIME_SECONDS ? session : undefined;
    },
    csrfTokenFor: (session) => mac('csrf', session),
    checkCsrfToken: (session, candidate) => candidate !== undefined && equalSecrets(candidate, mac('csrf', session)),
  };
}

export interface RequestHeaders {
  header(name: string): string | undefined;
}

/**
 * The browser's own word on where a POST came from: `Origin` must be one of this service's own
 * (INBOX_PUBLIC_URL's, or the request's allowed Host: allowed-hosts.ts, the names the host guard
 * lets in). `X-Forwarded-Host` vouches for nothing: a rebinding page can set it. Without Origin,
 * only `Sec-Fetch-Site: same-origin` will do. Anything else — another site, `null`, no header — fails.
 */
export function isSameOriginRequest(request: RequestHeaders, allowedHosts: AllowedHosts): boolean {
  const origin = request.header('origin');
  if (origin !== undefined) return allowedHosts.allowsOrigin(origin, request.header('host'));
  return request.header('sec-fetch-site') === 'same-origin';
}
