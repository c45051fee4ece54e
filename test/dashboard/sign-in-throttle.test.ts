import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SIGN_IN_MAX_FAILURES, SIGN_IN_WINDOW_SECONDS, clientKeyOf, createSignInThrottle } from '../../src/dashboard/sign-in-throttle.ts';
import { useTestDatabase } from '../support/database.ts';
import { requestWithHost } from '../support/host-request.ts';
import { useService } from '../support/service.ts';

const ADMIN_TOKEN = 'throttle-admin-token-0123456789ab';
const start = new Date('2026-06-01T12:00:00Z');
let now = start;
const advance = (seconds: number) => {
  now = new Date(now.getTime() + seconds * 1000);
};
const database = useTestDatabase();

/** A sign-in POST from `client` (a 127.0.0.0/8 address: each is another client to the server). */
function signIn(client: string, token: string) {
  const host = new URL(service.baseUrl).host;
  return requestWithHost(`${service.baseUrl}/dashboard/session`, {
    method: 'POST',
    host,
    localAddress: client,
    headers: { origin: service.baseUrl },
    form: { token },
  });
}

async function failTimes(client: string, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await signIn(client, `wrong-token-${i}-0123456789`)).status);
  return statuses;
}

const service = useService({ database, env: { INBOX_ROLE: 'receiver', INBOX_ADMIN_TOKEN: ADMIN_TOKEN }, clock: () => now });

describe('sign-in attempts over HTTP, per client address', () => {
  test('the 11th wrong token in a minute gets 429 with Retry-After, and so does the right token until the window passes', async () => {
    now = start;
    assert.deepEqual(await failTimes('127.0.0.11', SIGN_IN_MAX_FAILURES), Array(SIGN_IN_MAX_FAILURES).fill(403));
    const eleventh = await signIn('127.0.0.11', 'wrong-token-eleven-0123456789');
    assert.equal(eleventh.status, 429);
    assert.equal(eleventh.headers['retry-after'], String(SIGN_IN_WINDOW_SECONDS));
    const right = await signIn('127.0.0.11', ADMIN_TOKEN);
    assert.equal(right.status, 429, 'a throttled client is not told whether a token is right');
    assert.equal(right.headers['set-cookie'], undefined);
    advance(45);
    assert.equal((await signIn('127.0.0.11', ADMIN_TOKEN)).headers['retry-after'], '15');
    advance(15);
    assert.equal((await signIn('127.0.0.11', ADMIN_TOKEN)).status, 303, 'the window has passed');
  });

  test('another client still signs in, and still gets 403 for a wrong token, while one is throttled', async () => {
    now = start;
    await failTimes('127.0.0.12', SIGN_IN_MAX_FAILURES + 1);
    assert.equal((await signIn('127.0.0.12', ADMIN_TOKEN)).status, 429);
    assert.equal((await signIn('127.0.0.13', 'wrong-token-other-0123456789')).status, 403);
    const other = await signIn('127.0.0.13', ADMIN_TOKEN);
    assert.equal(other.status, 303);
    assert.match(String(other.headers['set-cookie']), /inbox_admin=/);
  });

  test('200 concurrent wrong tokens from one client: 10 are checked, 190 get 429', async () => {
    now = start;
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => signIn('127.0.0.14', `wrong-token-${i}-0123456789`)));
    const count = (status: number) => responses.filter((r) => r.status === status).length;
    assert.deepEqual({ 403: count(403), 429: count(429) }, { 403: SIGN_IN_MAX_FAILURES, 429: 200 - SIGN_IN_MAX_FAILURES });
  });

  test("a successful sign-in clears the client's failures", async () => {
    now = start;
    await failTimes('127.0.0.15', SIGN_IN_MAX_FAILURES - 1);
    assert.equal((await signIn('127.0.0.15', ADMIN_TOKEN)).status, 303);
    assert.deepEqual(await failTimes('127.0.0.15', SIGN_IN_MAX_FAILURES), Array(SIGN_IN_MAX_FAILURES).fill(403));
    assert.equal((await signIn('127.0.0.15', ADMIN_TOKEN)).status, 429);
  });
});

describe('createSignInThrottle', () => {
  const options = (clock: () => Date, maxClients = 100) => ({ maxFailures: 3, windowSeconds: 60, maxClients, clock });

  test('a client is throttled from its third failure until a minute after its first', () => {
    let at = start;
    const throttle = createSignInThrottle(options(() => at));
    throttle.recordFailure('a');
    at = new Date(start.getTime() + 20_000);
    throttle.recordFailure('a');
    assert.equal(throttle.retryAfterSeconds('a'), undefined);
    assert.equal(throttle.recordFailure('a'), true, 'the failure that uses up the budget says so');
    assert.equal(throttle.retryAfterSeconds('a'), 40);
    at = new Date(start.getTime() + 59_001);
    assert.equal(throttle.retryAfterSeconds('a'), 1, 'never 0 while refused');
    at = new Date(start.getTime() + 60_000);
    assert.equal(throttle.retryAfterSeconds('a'), undefined);
  });

  test('memory stays bounded: past maxClients the oldest window is forgotten', () => {
    const throttle = createSignInThrottle(options(() => start, 3));
    for (const client of ['a', 'b', 'c', 'd', 'e']) for (let i = 0; i < 3; i++) throttle.recordFailure(client);
    assert.equal(throttle.trackedClients(), 3);
    assert.equal(throttle.retryAfterSeconds('a'), undefined, 'forgotten');
    assert.equal(throttle.retryAfterSeconds('e'), 60);
  });
});

describe('clientKeyOf', () => {
  test('IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 (one host holds a whole /64)', () => {
    assert.equal(clientKeyOf('203.0.113.7'), '203.0.113.7');
    assert.equal(clientKeyOf('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(clientKeyOf('2001:db8:1:2::1'), clientKeyOf('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    assert.notEqual(clientKeyOf('2001:db8:1:2::1'), clientKeyOf('2001:db8:1:3::1'));
    assert.equal(clientKeyOf('2001:DB8:1:2::1'), '2001:db8:1:2::/64');
    assert.equal(clientKeyOf('::1'), '0:0:0:0::/64');
    assert.equal(clientKeyOf(undefined), 'unknown');
  });
});
