/**
 * /api/v1 while PostgreSQL is down, over a real socket, against a service process and a cluster of
 * this file's own (stopping the shared test cluster would fail every other file).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type PrivateCluster, startPrivateCluster } from '../fault/support/private-cluster.ts';
import { type ServiceProcess, spawnService } from '../fault/support/service-process.ts';
import { freePort } from '../support/free-port.ts';
import { API_TOKEN } from './feed-client.ts';

let cluster: PrivateCluster;
let service: ServiceProcess;

before(async () => {
  cluster = await startPrivateCluster();
  service = await spawnService({
    port: await freePort(),
    env: { DATABASE_URL: cluster.url, WEBHOOK_SECRET_STRIPE: 'whsec_api_outage', INBOX_API_TOKEN: API_TOKEN, DATABASE_CONNECT_TIMEOUT_SECONDS: '1' },
  });
});

after(async () => {
  await service?.stop();
  await cluster?.destroy();
});

const get = (path: string) => fetch(`${service.baseUrl}${path}`, { headers: { authorization: `Bearer ${API_TOKEN}` } });

// Found by a probe: with the database stopped the feed and the lookup answered 500 internal_error,
// "Unexpected error; the event was not acknowledged." (the webhook route's words), with no Retry-After.
test('the database down: the feed and the payments lookup answer 503 database_unavailable with Retry-After; back up, 200 again', async () => {
  const paths = ['/api/v1/payment-events', '/api/v1/payments/stripe/ch_outage'];
  await cluster.stop('fast');
  try {
    for (const path of paths) {
      const response = await get(path);
      const body = (await response.json()) as { error: { code: string; message: string } };
      assert.equal(response.status, 503, path);
      assert.equal(body.error.code, 'database_unavailable', path);
      assert.doesNotMatch(body.error.message, /event was not acknowledged/, path);
      assert.match(response.headers.get('retry-after') ?? '', /^\d+$/, path);
    }
  } finally {
    await cluster.start();
  }
  assert.equal((await get(paths[0]!)).status, 200);
  assert.equal((await get(paths[1]!)).status, 404);
  const document = (await (await fetch(`${service.baseUrl}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, { get: { responses: Record<string, unknown> } }>;
  };
  for (const path of ['/api/v1/payment-events', '/api/v1/payments/{provider}/{chargeId}'])
    assert.ok(document.paths[path]!.get.responses['503'], `OpenAPI: 503 on ${path}`);
});
