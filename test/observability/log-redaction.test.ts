import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/logger.ts';

/** Every line the logger writes, parsed. */
function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', destination), lines };
}

test("a request's headers reach the log without any credential, whatever gateway or configured provider named the header", () => {
  const { logger, lines } = capturedLogger();
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    'stripe-signature': 't=1,v1=abc',
    authorization: 'Bearer s3cret',
    // A header no built-in gateway uses: an INBOX_CONFIG `hmac` or `token` provider names its own.
    'x-acme-signature': 'sha256=deadbeef',
    'x-toy-token': 'tok_live_123',
  };
  logger.info({ headers }, 'a webhook request');
  const logged = lines[0]!.headers as Record<string, unknown>;
  assert.equal(logged['content-type'], 'application/json');
  assert.equal(logged['user-agent'], headers['user-agent']);
  for (const name of ['stripe-signature', 'authorization', 'x-acme-signature', 'x-toy-token']) assert.equal(logged[name], '[redacted]', name);
  assert.doesNotMatch(JSON.stringify(lines), /abc|s3cret|deadbeef|tok_live_123/);
});

test('secrets are redacted wherever a log line carries them', () => {
  const { logger, lines } = capturedLogger();
  logger.info({ secret: 'whsec_a', provider: { secrets: ['whsec_b'] } }, 'configured');
  assert.doesNotMatch(JSON.stringify(lines), /whsec_a|whsec_b/);
});
