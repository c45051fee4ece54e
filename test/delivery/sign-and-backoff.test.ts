import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { backoffSeconds, nextAttemptDelaySeconds, retryAfterSeconds } from '../../src/delivery/backoff.ts';
import { signWebhook, signingKey } from '../../src/delivery/sign.ts';
import { newDestinationSecret } from './support/lanes.ts';

describe('Standard Webhooks signing, checked by the official standardwebhooks package', () => {
  const secret = newDestinationSecret();
  const body = JSON.stringify({ id: '0193a0c4-6a8e-7d2b-9f7e-1c2d3e4f5a6b', type: 'payment.paid', sequence: 1 });
  const id = '0193a0c4-6a8e-7d2b-9f7e-1c2d3e4f5a6b';

  test('the headers verify, and verify returns the body', () => {
    const headers = signWebhook([signingKey(secret)], id, new Date(), body);
    assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body));
    assert.equal(headers['webhook-id'], id);
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+={0,2}$/);
  });

  test('one negative per way it can be wrong: another body, id, timestamp or secret, or a stale attempt', () => {
    const now = new Date();
    const headers = signWebhook([signingKey(secret)], id, now, body);
    const verify = (b: string, h: Record<string, string>, s = secret) => assert.throws(() => new Webhook(s).verify(b, h));
    verify(`${body} `, { ...headers });
    verify(body, { ...headers, 'webhook-id': `${id}x` });
    verify(body, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) });
    verify(body, { ...headers }, newDestinationSecret());
    const stale = signWebhook([signingKey(secret)], id, new Date(now.getTime() - 600_000), body);
    verify(body, { ...stale });
  });
});

describe('backoff', () => {
  const settings = { retryDelaySeconds: 5, retryDelayMaxSeconds: 3600 };

  test('doubles per failure with a factor in [1, 2), capped', () => {
    assert.equal(
      backoffSeconds(1, settings, () => 0),
      5,
    );
    assert.equal(
      backoffSeconds(4, settings, () => 0),
      40,
    );
    assert.equal(
      backoffSeconds(4, settings, () => 0.5),
      60,
    );
    assert.equal(
      backoffSeconds(30, settings, () => 0.99),
      3600,
    );
  });

  // Found from outside: `Retry-After: 0` parked a lane in 89 ms (8 attempts), the header replacing the backoff.
  test('a Retry-After shorter than the backoff (0, a date already past) never shortens the wait below it; a longer one lengthens it', () => {
    const now = new Date('2026-12-03T12:00:00Z');
    const noJitter = () => 0;
    for (const failures of [1, 2, 3, 4]) {
      const floor = backoffSeconds(failures, settings, noJitter);
      assert.equal(nextAttemptDelaySeconds(failures, retryAfterSeconds('0', now), settings, noJitter), floor, `Retry-After: 0 after ${failures} failures`);
      assert.equal(
        nextAttemptDelaySeconds(failures, retryAfterSeconds('Thu, 03 Dec 2026 11:00:00 GMT', now), settings, noJitter),
        floor,
        `a past date after ${failures} failures`,
      );
    }
    assert.equal(nextAttemptDelaySeconds(1, retryAfterSeconds('3', now), { retryDelaySeconds: 1, retryDelayMaxSeconds: 60 }, noJitter), 3);
    assert.equal(nextAttemptDelaySeconds(3, retryAfterSeconds('3', now), { retryDelaySeconds: 1, retryDelayMaxSeconds: 60 }, noJitter), 4);
  });

  test('Retry-After, in seconds or as an HTTP-date, lengthens the backoff; unreadable is ignored', () => {
    const now = new Date('2026-12-03T12:00:00Z');
    assert.equal(retryAfterSeconds('120', now), 120);
    assert.equal(retryAfterSeconds('Thu, 03 Dec 2026 12:05:00 GMT', now), 300);
    assert.equal(retryAfterSeconds('Thu, 03 Dec 2026 11:00:00 GMT', now), 0);
    assert.equal(retryAfterSeconds('soon', now), undefined);
    assert.equal(retryAfterSeconds(null, now), undefined);
    assert.equal(retryAfterSeconds('999999999', now), 86_400);
    assert.equal(nextAttemptDelaySeconds(1, 120, settings), 120);
    assert.ok(nextAttemptDelaySeconds(1, undefined, settings) < 10);
  });

  test('a Retry-After that is neither whole seconds nor an HTTP-date is ignored, not read by Date.parse as a year (1.5 → 2001, +3600 → year 3600)', () => {
    const now = new Date('2026-12-03T12:00:00Z');
    for (const value of ['1.5', '-1', '+60', '+3600', '30s', '12-03-2026', '2026-12-03']) assert.equal(retryAfterSeconds(value, now), undefined, value);
    // The three forms of RFC 9110 §5.6.7 a recipient must read: IMF-fixdate, RFC 850, asctime (all GMT).
    assert.equal(retryAfterSeconds('Thu, 03 Dec 2026 12:05:00 GMT', now), 300);
    assert.equal(retryAfterSeconds('Thursday, 03-Dec-26 12:05:00 GMT', now), 300);
    assert.equal(retryAfterSeconds('Thu Dec  3 12:05:00 2026', now), 300);
  });
});
