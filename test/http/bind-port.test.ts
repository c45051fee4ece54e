/** bindPort (src/http/server.ts): the port is taken before the app exists, and answers honestly meanwhile. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { bindPort } from '../../src/http/server.ts';

test('between taking the port and serving: /healthz is alive, everything else 503 service_starting with Retry-After; then the app answers', async () => {
  const bound = await bindPort(0, '127.0.0.1');
  try {
    const base = `http://127.0.0.1:${bound.port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const starting = await fetch(`${base}/webhooks/stripe`, { method: 'POST', body: '{}' });
    assert.equal(starting.status, 503);
    assert.equal(starting.headers.get('retry-after'), '5');
    assert.equal(((await starting.json()) as { error: { code: string } }).error.code, 'service_starting');
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    const app = new Hono();
    app.get('/readyz', (c) => c.json({ status: 'ready' }));
    bound.serve(app as never);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
  } finally {
    await bound.close();
  }
});
