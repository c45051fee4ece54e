import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SESSION_LIFETIME_SECONDS, createAdminAccess, isSameOriginRequest } from '../../src/dashboard/admin-access.ts';
import { createAllowedHosts } from '../../src/web/allowed-hosts.ts';

const TOKEN = 'admin-access-test-token-0123456789';
const now = new Date('2026-06-01T12:00:00Z');
const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);
const headers = (values: Record<string, string>) => ({ header: (name: string) => values[name] });

describe('admin sessions', () => {
  const access = createAdminAccess(TOKEN);

  test('only the configured token signs in', () => {
    assert.equal(access.checkToken(TOKEN), true);
    assert.equal(access.checkToken(`${TOKEN}x`), false);
    assert.equal(access.checkToken(''), false);
  });

  test('an issued cookie proves a session until it expires', () => {
    const cookie = access.issueSession(now);
    assert.ok(access.sessionOf(cookie, later(60)));
    assert.ok(access.sessionOf(cookie, later(SESSION_LIFETIME_SECONDS - 1)));
    assert.equal(access.sessionOf(cookie, later(SESSION_LIFETIME_SECONDS)), undefined);
  });

  test('a tampered, truncated or foreign cookie proves nothing', () => {
    const cookie = access.issueSession(now);
    const [issued, nonce, mac] = cookie.split('.') as [string, string, string];
    assert.equal(access.sessionOf(`${Number(issued) + 3600}.${nonce}.${mac}`, now), undefined, 'a later issue time');
    assert.equal(access.sessionOf(`${issued}.${nonce}x.${mac}`, now), undefined);
    assert.equal(access.sessionOf(`${issued}.${nonce}`, now), undefined);
    assert.equal(access.sessionOf(`${cookie}.extra`, now), undefined);
    assert.equal(access.sessionOf(createAdminAccess('another-token-0123456789abcdef').issueSession(now), now), undefined, 'signed with another token');
  });

  test('rotating the token ends every session', () => {
    const cookie = access.issueSession(now);
    assert.equal(createAdminAccess('the-rotated-token-0123456789abc').sessionOf(cookie, now), undefined);
  });

  test('a CSRF token is valid for its own session only', () => {
    const first = access.sessionOf(access.issueSession(now), now)!;
    const second = access.sessionOf(access.issueSession(now), now)!;
    assert.equal(access.checkCsrfToken(first, access.csrfTokenFor(first)), true);
    assert.equal(access.checkCsrfToken(first, access.csrfTokenFor(second)), false);
    assert.equal(access.checkCsrfToken(first, undefined), false);
  });

  test('without a token nobody signs in', () => {
    const readOnly = createAdminAccess(undefined);
    assert.equal(readOnly.canSignIn, false);
    assert.equal(readOnly.checkToken(''), false);
    assert.equal(readOnly.sessionOf(access.issueSession(now), now), undefined);
    assert.throws(() => readOnly.issueSession(now), /read-only/);
  });
});

describe('isSameOriginRequest', () => {
  const hosts = createAllowedHosts({ publicOrigin: 'https://ops.example.com', hosts: ['inbox.internal'] });

  test('Origin must be the request’s own allowed host, or INBOX_PUBLIC_URL’s origin', () => {
    assert.equal(isSameOriginRequest(headers({ host: 'inbox.internal:3000', origin: 'http://inbox.internal:3000' }), hosts), true);
    assert.equal(isSameOriginRequest(headers({ host: 'inbox:3000', origin: 'https://ops.example.com' }), hosts), true, 'a proxy rewrote Host');
    assert.equal(
      isSameOriginRequest(headers({ host: 'inbox.internal:3000', origin: 'http://inbox.internal:4000' }), hosts),
      false,
      'another port is another origin',
    );
    assert.equal(isSameOriginRequest(headers({ host: 'inbox.internal:3000', origin: 'https://evil.example' }), hosts), false);
    assert.equal(isSameOriginRequest(headers({ host: 'inbox.internal:3000', origin: 'null' }), hosts), false);
  });

  test('a Host the guard would refuse vouches for nothing, and neither does X-Forwarded-Host', () => {
    assert.equal(isSameOriginRequest(headers({ host: 'evil.example', origin: 'http://evil.example' }), hosts), false);
    assert.equal(isSameOriginRequest(headers({ host: 'inbox.internal', 'x-forwarded-host': 'evil.example', origin: 'https://evil.example' }), hosts), false);
  });

  test('without Origin only Sec-Fetch-Site: same-origin will do', () => {
    assert.equal(isSameOriginRequest(headers({ host: 'a', 'sec-fetch-site': 'same-origin' }), hosts), true);
    assert.equal(isSameOriginRequest(headers({ host: 'a', 'sec-fetch-site': 'cross-site' }), hosts), false);
    assert.equal(isSameOriginRequest(headers({ host: 'a' }), hosts), false);
  });
});
